"""The sign-in mail worker rides out a database outage (``dps_common.db_retry.OutageLog``): its login
is refused and its sessions ended for a few seconds while a sign-in mail is queued; the worker logs
the outage once and its end once (not a traceback per poll), stays alive, and sends the mail once
the database is back."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from dps_common import migrations
from dps_common.db_retry import AVAILABLE_AGAIN_MESSAGE, UNAVAILABLE_MESSAGE
from dps_testing.connection_kills import private_login
from dps_testing.services import fresh_database

from dps_console.composition import build_http, build_mail_worker

from console_helpers import Browser

OUTAGE_SECONDS = 3.0  # three polls and more at the worker's 1 s
SENT_WITHIN = 30.0


def test_the_mail_worker_logs_an_outage_once_and_sends_the_mail_queued_during_it(
    make_settings, mailbox, org, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="dps")
    # a database of its own: another mail worker on the suite's database would send the mail queued here
    with fresh_database("dps_console_outage") as database_url, private_login(database_url) as login:
        migrations.upgrade("dps_console", database_url)
        pages = build_http(make_settings(DATABASE_URL=database_url, CONSOLE_SIGN_IN_PER_EMAIL="1000"))
        worker = build_mail_worker(make_settings(DATABASE_URL=login.url))
        thread = threading.Thread(target=worker.run, daemon=True)
        thread.start()
        try:
            with login.refused():
                sent_before = len(mailbox.to(org.admin.email))
                browser = Browser(pages)
                browser.get("/console/sign-in")
                answer = browser.post("/console/sign-in", {"email": org.admin.email})
                assert answer.headers.get("location") == "/console/sign-in/sent"
                time.sleep(OUTAGE_SECONDS)
                assert len(mailbox.to(org.admin.email)) == sent_before
            deadline = time.monotonic() + SENT_WITHIN
            while len(mailbox.to(org.admin.email)) == sent_before:
                assert time.monotonic() < deadline, "the mail queued during the outage was not sent"
                time.sleep(0.05)
            assert thread.is_alive()
        finally:
            worker.stop()
            thread.join(timeout=30)
            pages.context.tx.dispose()
    loop = [r for r in caplog.records if getattr(r, "part", None) == "sign-in mail loop"]
    assert [r.getMessage() for r in loop] == [UNAVAILABLE_MESSAGE, AVAILABLE_AGAIN_MESSAGE]
    assert not [r for r in caplog.records if r.name == "dps.console.worker" and r.exc_info]
