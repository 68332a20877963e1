"""The push worker rides out a database outage (``dps_common.db_retry.OutageLog``): its login is
refused and its sessions ended for a few seconds while a push is queued; the worker logs the outage
once and its end once (not a traceback per poll), stays alive, and runs the push once it is back."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import pytest

from dps_common import migrations
from dps_common.db_retry import AVAILABLE_AGAIN_MESSAGE, UNAVAILABLE_MESSAGE
from dps_testing.connection_kills import private_login
from dps_testing.services import fresh_database

from dps_billing.composition import build_push_worker

from billing_helpers import connect, line, quote
from push_helpers import read_push, request_push, wait_for

OUTAGE_SECONDS = 3.0  # a dozen polls at the poll below


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    """A database of this module's own (its settings, app and worker follow it): other modules leave
    pushes queued on the suite's database with connections sealed under their own token key, which
    this worker would claim and fail to open ('push run crashed', fresh-clone CI)."""
    with fresh_database("dps_billing_outage") as url:
        migrations.upgrade("dps_billing", url)
        yield url


def test_the_push_worker_logs_an_outage_once_and_runs_the_push_queued_during_it(
    served, fake_api, stand_in, make_settings, settings_env, caplog: pytest.LogCaptureFixture
) -> None:
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    snapshot = quote(org.id, org.user.user_id, [line()])
    fake_api.put_quote(snapshot)
    caplog.set_level(logging.INFO, logger="dps")
    with private_login(settings_env["DATABASE_URL"]) as login:
        worker = build_push_worker(make_settings(DATABASE_URL=login.url, PUSH_POLL_INTERVAL_SECONDS="0.25"))
        thread = threading.Thread(target=worker.run, daemon=True)
        thread.start()
        try:
            with login.refused():
                push = request_push(served, org.admin.key, snapshot)  # the connector's own connections serve it
                time.sleep(OUTAGE_SECONDS)
                assert read_push(served, org.user.key, snapshot.id, push["id"])["status"] == "queued"
            done = wait_for(served, org.user.key, snapshot.id, push["id"], timeout=30)
            assert thread.is_alive()
        finally:
            worker.stop()
            thread.join(timeout=30)
    assert done["status"] == "succeeded", done
    loop = [r for r in caplog.records if getattr(r, "part", None) == "push claim loop"]
    assert [r.getMessage() for r in loop] == [UNAVAILABLE_MESSAGE, AVAILABLE_AGAIN_MESSAGE]
    assert not [r for r in caplog.records if r.name == "dps.billing.worker" and r.exc_info]

