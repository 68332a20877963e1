"""One action per submitted form, against the real api: a repeat of a form's one-time token goes
where the first went without acting; the token is the api's Idempotency-Key, so even a console that
lost its record of the first submission gets the api's replay (the secret null: "shown once"), never
a second key; a secret crosses the redirect sealed, for one read within a minute, for its session
only."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from uuid import uuid4

import pytest
from sqlalchemy import delete, select

from dps_common.crypto import SecretBox

from dps_console.composition import build_http
from dps_console.db.models import ConsoleSession, FormResult
from dps_console.domain.tokens import new_token
from dps_console.services.form_results import FormResults
from dps_console.settings import Settings

from console_helpers import Browser


@pytest.fixture
def pages(services_env, tx):
    return build_http(Settings.from_env(services_env), tx=tx)


def _names(listed: str, name: str) -> int:
    return listed.count(f">{name}</th>")


def test_a_repeated_form_issues_one_key_and_shows_its_secret_once(pages, mailbox, org):
    admin = Browser(pages)
    admin.sign_in(mailbox, org.admin.email)
    admin.open("/console/api-keys/new")
    once = admin.once("/console/api-keys/new")
    first = admin.post("/console/api-keys/new", {"name": "Twice sent", "role": "view only"}, once=once)
    admin.open("/console/api-keys/new")
    again = admin.post("/console/api-keys/new", {"name": "Twice sent", "role": "view only"}, once=once)
    assert first.status_code == again.status_code == 303
    assert first.headers["location"] == again.headers["location"]  # where the first went, nothing done
    shown = admin.get(first.headers["location"])
    assert 'id="secret"' in shown.text
    assert _names(admin.get("/console/api-keys").text, "Twice sent") == 1


def test_a_console_that_lost_its_record_gets_the_apis_replay_never_a_second_key(pages, tx, mailbox, org):
    admin = Browser(pages)
    admin.sign_in(mailbox, org.admin.email)
    admin.open("/console/api-keys/new")
    once = admin.once("/console/api-keys/new")
    first = admin.post("/console/api-keys/new", {"name": "Replayed", "role": "view only"}, once=once)
    secret = re.search(r'id="secret" type="text" readonly value="([^"]+)"', admin.get(first.headers["location"]).text)
    assert secret
    with tx() as session:  # as if the console had died between the api's answer and its record
        session.execute(delete(FormResult).where(FormResult.form_token == once))
    admin.open("/console/api-keys/new")
    again = admin.post("/console/api-keys/new", {"name": "Replayed", "role": "view only"}, once=once)
    assert again.status_code == 303
    page = admin.get(again.headers["location"])
    assert "this secret was shown once" in page.text and 'id="secret"' not in page.text
    assert secret.group(1) not in page.text
    assert _names(admin.get("/console/api-keys").text, "Replayed") == 1


def test_a_form_without_its_one_time_token_is_refused(pages, mailbox, org):
    admin = Browser(pages)
    admin.sign_in(mailbox, org.admin.email)
    admin.open("/console/api-keys/new")
    refused = admin.post("/console/api-keys/new", {"name": "No token", "role": "view only"}, once="")
    assert refused.status_code == 400 and "out of date" in refused.text


def _session_row(tx) -> ConsoleSession:
    row = ConsoleSession(id=uuid4(), cookie_hash=uuid4().bytes, email="s@x.example", person={},
                         credential_sealed=b"x", credential_key_id="k", created_at=datetime.now(UTC),
                         last_seen_at=datetime.now(UTC), expires_at=datetime.now(UTC) + timedelta(hours=1))
    with tx() as session:
        session.add(row)
    return row


def test_a_sealed_secret_is_read_once_within_a_minute_by_its_session_only(tx):
    now = datetime.now(UTC)
    box = SecretBox(b"k" * 32)
    results = FormResults(tx, box, lambda: now)
    owner, other = _session_row(tx), _session_row(tx)
    page = {"title": "API key issued", "what": "The API key “x”"}
    for token in (first := new_token(), late := new_token()):
        assert results.claim(owner.id, token)
        results.finish(owner.id, token, "/console/shown-once/" + token, page=page, secret="dps_abc_secret")
    with tx.read() as session:
        sealed = session.scalars(select(FormResult.sealed).where(FormResult.session_id == owner.id)).all()
    assert all(s and b"dps_abc_secret" not in s for s in sealed)  # never in the clear

    assert results.take(other.id, first) is None  # another session's token: nothing
    taken = results.take(owner.id, first)
    assert taken is not None and taken.secret == "dps_abc_secret" and taken.page == page
    again = results.take(owner.id, first)
    assert again is not None and again.secret is None  # shown once

    later = FormResults(tx, box, lambda: now + timedelta(seconds=61))
    expired = later.take(owner.id, late)
    assert expired is not None and expired.secret is None  # unread for over a minute: wiped
    with tx.read() as session:
        assert session.scalars(select(FormResult.sealed).where(FormResult.session_id == owner.id)).all() == [None, None]
