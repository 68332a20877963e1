"""The console's pure rules: tokens, CSRF, lifetimes of links and sessions, rate windows, who sees
what, problem details made into field messages, the settings checked at start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dps_common.crypto import new_key
from dps_common.settings import SettingsError

from dps_console.domain.csrf import cross_site, csrf_token, csrf_valid
from dps_console.domain.keys import ConsoleKeys
from dps_console.domain.lifetimes import (
    LINK_LIFETIME,
    LinkState,
    SessionState,
    SessionTimes,
    link_state,
    session_expiry,
    session_state,
    window_start,
)
from dps_console.domain.people import Person
from dps_console.domain.problems import Problem
from dps_console.domain.tokens import derived_token, looks_like_token, new_token, token_hash
from dps_console.settings import Settings

T0 = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def test_tokens_are_256_random_bits_and_stored_as_their_hash():
    tokens = {new_token() for _ in range(100)}
    assert len(tokens) == 100
    token = tokens.pop()
    assert len(token) == 43 and looks_like_token(token)
    assert token_hash(token) == token_hash(token) and len(token_hash(token)) == 32
    assert token.encode() not in token_hash(token)
    for bad in (None, "", "short", token + "x", token[:-1] + "!", token[:-1] + "é"):
        assert not looks_like_token(bad)


def test_a_csrf_token_is_good_only_with_its_own_binding_and_key():
    key, other_key = b"k" * 32, b"o" * 32
    token = csrf_token(key, "session-a")
    assert csrf_valid(key, "session-a", token)
    assert not csrf_valid(key, "session-b", token)
    assert not csrf_valid(other_key, "session-a", token)
    assert not csrf_valid(key, "session-a", "")
    assert not csrf_valid(key, None, token)
    assert not csrf_valid(key, "session-a", token[:-1] + ("0" if token[-1] != "0" else "1"))


@pytest.mark.parametrize(("origin", "fetch_site", "refused"), [
    (None, None, False),
    ("https://console.example", None, False),
    ("https://console.example/", "same-origin", False),
    (None, "none", False),  # typed in the address bar, a bookmark
    ("https://evil.example", None, True),
    ("null", None, False),  # a same-origin POST from a no-referrer page: the CSRF token decides
    ("null", "same-origin", False),  # what Chromium sends for the console's own forms
    ("null", "cross-site", True),
    (None, "cross-site", True),
    (None, "same-site", True),  # a sibling subdomain is another origin
    ("https://console.example", "cross-site", True),
    ("https://evil.example", "same-origin", False),  # fetch metadata decides when the browser sends it
])
def test_cross_site_posts_are_told_by_origin_and_fetch_metadata(origin, fetch_site, refused):
    assert cross_site(origin, fetch_site, "https://console.example") is refused


def test_derived_keys_differ_by_use_and_by_secret():
    keys = ConsoleKeys.from_secret(b"s" * 32)
    assert keys.csrf != keys.credentials and len(keys.credentials) == 32
    assert len({keys.csrf, keys.credentials, keys.shown_once, keys.inline_forms}) == 4
    assert ConsoleKeys.from_secret(b"s" * 32) == keys
    assert ConsoleKeys.from_secret(b"t" * 32).csrf != keys.csrf


def test_a_link_works_once_for_fifteen_minutes():
    expires = T0 + LINK_LIFETIME
    assert link_state(expires, None, T0) is LinkState.USABLE
    assert link_state(expires, None, T0 + timedelta(minutes=14, seconds=59)) is LinkState.USABLE
    assert link_state(expires, None, T0 + timedelta(minutes=15)) is LinkState.EXPIRED
    assert link_state(expires, T0 + timedelta(minutes=1), T0 + timedelta(minutes=2)) is LinkState.USED


def test_a_session_ends_after_30_idle_minutes_or_12_hours_or_sign_out():
    times = SessionTimes(created_at=T0, last_seen_at=T0, expires_at=session_expiry(T0))
    assert session_state(times, T0 + timedelta(minutes=29, seconds=59)) is SessionState.ACTIVE
    assert session_state(times, T0 + timedelta(minutes=30)) is SessionState.IDLE
    busy = SessionTimes(T0, T0 + timedelta(hours=11, minutes=59), session_expiry(T0))
    assert session_state(busy, T0 + timedelta(hours=11, minutes=59, seconds=30)) is SessionState.ACTIVE
    assert session_state(busy, T0 + timedelta(hours=12)) is SessionState.EXPIRED
    ended = SessionTimes(T0, T0, session_expiry(T0), ended_at=T0 + timedelta(minutes=1))
    assert session_state(ended, T0 + timedelta(minutes=2)) is SessionState.ENDED


def test_rate_windows_are_fixed_and_aligned():
    start = window_start(T0 + timedelta(minutes=7), 900)
    assert start == T0 and window_start(T0 + timedelta(minutes=14, seconds=59), 900) == T0
    assert window_start(T0 + timedelta(minutes=15), 900) == T0 + timedelta(minutes=15)


def _person(role: str, access: bool = False) -> Person:
    return Person("u", "p@x.example", "P", role, access, "o", "Org")


def test_who_sees_which_sections_and_which_roles_a_key_may_have():
    assert _person("admin").sections() == ("keys", "team", "webhooks", "billing")
    assert _person("user", access=True).sections() == ("keys", "pushes")
    assert _person("user").sections() == ()
    assert _person("view only").sections() == ()
    assert _person("admin").roles_offered() == ("admin", "user", "view only")
    assert _person("user", access=True).roles_offered() == ("user", "view only")
    assert _person("view only", access=True).roles_offered() == ("view only",)
    person = _person("user", access=True)
    assert Person.from_json(person.to_json()) == person


@pytest.mark.parametrize(("role", "access", "may"), [
    ("admin", False, {"keys", "team", "webhooks", "billing", "pushes"}),
    ("user", True, {"keys", "pushes"}),
    ("user", False, set()),
    ("view only", False, set()),
    ("view only", True, set()),  # view only has no API-key rights, even if access was granted once
])
def test_each_role_may_use_only_its_parts_and_is_told_whom_to_ask(role, access, may):
    person = _person(role, access=access)
    parts = {"keys", "team", "webhooks", "billing", "pushes"}
    assert {part for part in parts if person.may_use(part)} == may
    for part in parts - may:
        assert "Ask an administrator" in person.refusal(part) and role in person.refusal(part)


def test_problem_details_become_messages_next_to_their_fields():
    problem = Problem.from_body(400, {
        "code": "validation_failed", "title": "Invalid request", "detail": "url: must be https",
        "errors": [{"field": "url", "message": "must be https"}, {"field": "eventTypes[1]", "message": "unknown"},
                   {"field": "body.name", "message": "too long"}, {"field": "secretSauce", "message": "nope"}],
    })
    assert problem.fields == {"url": ["must be https"], "eventTypes": ["unknown"], "name": ["too long"],
                              "secretSauce": ["nope"]}
    assert problem.message == "url: must be https"
    assert problem.unplaced(("url", "eventTypes", "name")) == ["secretSauce: nope"]
    assert Problem.from_body(502, "<html>").message == "The service could not answer."


def _env(**overrides: str) -> dict[str, str]:
    return {
        "DATABASE_URL": "postgresql://db/console", "API_URL": "https://api.internal/external/v1",
        "API_INTERNAL_URL": "https://api.internal", "WEBHOOKS_URL": "https://hooks.internal/external/v1",
        "BILLING_URL": "https://billing.internal/external/v1", "CONSOLE_API_TOKEN": "t" * 40,
        "SMTP_URL": "smtp://mail.internal:25", "MAIL_FROM": "console@example.com",
        "CONSOLE_PUBLIC_URL": "https://app.example/console/", "CONSOLE_SECRET_KEY": new_key(), **overrides,
    }


def test_settings_read_the_contracts_names():
    settings = Settings.from_env(_env())
    assert settings.public_url == "https://app.example/console" and settings.https
    assert settings.public_origin == "https://app.example"
    assert len(settings.secret_key) == 32


@pytest.mark.parametrize(("overrides", "named"), [
    ({"CONSOLE_SECRET_KEY": "too-short"}, "CONSOLE_SECRET_KEY"),
    ({"SMTP_URL": "http://mail:25"}, "SMTP_URL"),
    ({"SMTP_URL": "smtp://mail"}, "SMTP_URL"),
    ({"MAIL_FROM": "nobody"}, "MAIL_FROM"),
    ({"CONSOLE_PUBLIC_URL": "http://app.example/console"}, "CONSOLE_PUBLIC_URL must be https"),
    ({"CONSOLE_PUBLIC_URL": "https://app.example"}, "CONSOLE_PUBLIC_URL must end"),
    ({"CONSOLE_API_TOKEN": "short"}, "CONSOLE_API_TOKEN"),
    ({"API_URL": ""}, "API_URL is required"),
])
def test_settings_name_every_problem_at_start(overrides, named):
    with pytest.raises(SettingsError, match=named):
        Settings.from_env(_env(**overrides))


def test_plain_http_is_for_development_only():
    settings = Settings.from_env(_env(CONSOLE_PUBLIC_URL="http://127.0.0.1:8083/console", DPS_ENVIRONMENT="development"))
    assert not settings.https


def test_a_derived_token_has_a_tokens_shape_and_is_the_same_for_the_same_parts_only():
    key = b"k" * 32
    token = derived_token(key, "session", "view", "/console/webhooks/1/test")
    assert looks_like_token(token)
    assert token == derived_token(key, "session", "view", "/console/webhooks/1/test")  # Back, press again
    others = {derived_token(key, "session", "other view", "/console/webhooks/1/test"),
              derived_token(key, "session", "view", "/console/webhooks/2/test"),
              derived_token(key, "other session", "view", "/console/webhooks/1/test"),
              derived_token(b"x" * 32, "session", "view", "/console/webhooks/1/test")}
    assert token not in others and len(others) == 4
