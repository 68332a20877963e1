"""Signing in with a one-time link from a real mail, against the real api; the mail sent from the
console's queue, never within the request; the link used once and for 15 minutes; the session
cookie's flags (a stale cookie replaced, never kept dead); CSRF and cross-site POSTs; signing out and
timing out end the session and the api refuses its credential from then on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import requests

from dps_console.composition import build_http

from console_helpers import Browser, _token_of, watch_calls


def _later(minutes: float):
    return lambda: datetime.now(UTC) + timedelta(minutes=minutes)


def test_a_person_signs_in_from_the_link_in_the_mail(app, mailbox, org):
    browser = Browser(app)
    form = browser.get("/console/sign-in")
    assert form.status_code == 200
    assert 'name="csrf"' in form.text

    asked = browser.post("/console/sign-in", {"email": org.admin.email.upper()})
    assert asked.status_code == 303
    assert asked.headers["location"].endswith("/console/sign-in/sent")
    browser.send_mail()
    link = mailbox.link_for(org.admin.email)
    assert link.startswith("http://console.test/console/sign-in/link?token=")
    assert len(_token_of(link)) == 43  # 256 bits

    opened = browser.get(link)  # what a mail scanner would do: nothing is used up
    assert opened.status_code == 200
    assert ">Sign in</button>" in opened.text
    assert "dps_console" not in browser.cookies
    opened_again = browser.get(link)
    assert opened_again.status_code == 200

    signed_in = browser.post("/console/sign-in/link", {"token": _token_of(link)})
    assert signed_in.status_code == 303
    assert signed_in.headers["location"] == "/console"
    cookie = signed_in.cookies["dps_console"]
    assert cookie.http_only and cookie.same_site == "Lax" and cookie.path == "/"
    assert not cookie.secure  # plain http in development; https below

    home = browser.get("/console")
    assert home.status_code == 200
    assert "Console Co" in home.text and "admin" in home.text
    assert 'href="/console/api-keys"' in home.text


def test_the_answer_is_the_same_for_an_unknown_email_and_no_mail_is_sent(app, mailbox):
    browser = Browser(app)
    browser.get("/console/sign-in")
    asked = browser.post("/console/sign-in", {"email": "nobody@unknown.example"})
    assert asked.status_code == 303
    assert asked.headers["location"].endswith("/console/sign-in/sent")
    browser.send_mail()
    assert mailbox.to("nobody@unknown.example") == []
    assert app.context.sign_in_mail.pending() == 0  # asked the api, which knows nobody of that address


def test_a_used_link_is_refused(app, mailbox, org):
    browser = Browser(app)
    browser.sign_in(mailbox, org.user.email)
    token = _token_of(mailbox.link_for(org.user.email))

    other = Browser(app)
    assert other.get(mailbox.link_for(org.user.email)).status_code == 400
    other.get("/console/sign-in")
    again = other.post("/console/sign-in/link", {"token": token})
    assert again.status_code == 400
    assert "does not work" in again.text
    assert "dps_console" not in other.cookies


def test_an_expired_link_is_refused(app, settings, tx, mailbox, org):
    browser = Browser(app)
    browser.get("/console/sign-in")
    browser.post("/console/sign-in", {"email": org.viewer.email})
    browser.send_mail()
    link = mailbox.link_for(org.viewer.email)

    later = Browser(build_http(settings, tx=tx, now=_later(16)))
    assert later.get(link).status_code == 400
    later.get("/console/sign-in")
    refused = later.post("/console/sign-in/link", {"token": _token_of(link)})
    assert refused.status_code == 400
    assert "dps_console" not in later.cookies


def test_a_stale_or_planted_session_cookie_does_not_burn_the_link(app, mailbox, org):
    """Whatever ``dps_console`` cookie the browser sends (a session ended meanwhile, another
    console's, a planted value), Sign in sets a new, live cookie: never one expiring in 1970 (a
    cookie cleared and set on one response kept the first's expiry), never the planted value."""
    ended = Browser(app)
    ended.sign_in(mailbox, org.user.email)
    ended_cookie = ended.cookies["dps_console"]
    ended.get("/console")
    assert ended.post("/console/sign-out").status_code == 303
    for stale in (ended_cookie, "planted-" + "0" * 35, "not even a token"):
        browser = Browser(app)
        browser.get("/console/sign-in")
        browser.post("/console/sign-in", {"email": org.user.email})
        browser.send_mail()
        link = mailbox.link_for(org.user.email)
        browser.get(link)
        browser.cookies["dps_console"] = stale  # set between opening the link and pressing Sign in
        signed_in = browser.post("/console/sign-in/link", {"token": _token_of(link)})
        assert signed_in.status_code == 303 and signed_in.headers["location"] == "/console"
        cookie = signed_in.cookies["dps_console"]
        assert cookie.value != stale and len(cookie.value) == 43
        assert cookie.expires is None and cookie.max_age is None, (stale, cookie.expires)  # a session cookie
        assert browser.get("/console").status_code == 200, stale


def test_over_https_the_cookie_is_secure_and_host_prefixed(make_settings, tx, mailbox, org):
    app = build_http(make_settings(CONSOLE_PUBLIC_URL="https://console.test/console"), tx=tx)
    browser = Browser(app, origin="https://console.test")
    signed_in = browser.sign_in(mailbox, org.admin.email)
    cookie = signed_in.cookies["__Host-dps_console"]
    assert cookie.secure and cookie.http_only and cookie.same_site == "Lax" and cookie.path == "/"
    assert cookie.domain is None
    assert browser.get("/console").status_code == 200


def test_posts_without_a_valid_token_or_from_another_site_are_refused(app, mailbox, org):
    browser = Browser(app)
    browser.sign_in(mailbox, org.admin.email)
    page = browser.open("/console/api-keys/new")
    assert page.status_code == 200
    token = browser.csrf()

    assert browser.post("/console/sign-out", csrf="").status_code == 403
    assert browser.post("/console/sign-out", csrf="0" * 64).status_code == 403
    cross = browser.post("/console/sign-out", csrf=token, headers={"Origin": "https://evil.example"})
    assert cross.status_code == 403
    assert "another site" in cross.text
    fetch = browser.post("/console/sign-out", csrf=token, headers={"Sec-Fetch-Site": "cross-site"})
    assert fetch.status_code == 403

    # the session is still there: none of those did anything
    assert browser.get("/console").status_code == 200
    # a token of another session is no good either
    other = Browser(app)
    other.sign_in(mailbox, org.user.email)
    assert other.post("/console/sign-out", csrf=token).status_code == 403
    same_site = browser.post("/console/sign-out", csrf=token,
                             headers={"Origin": "http://console.test", "Sec-Fetch-Site": "same-origin"})
    assert same_site.status_code == 303


def test_every_page_has_the_strict_headers(app, mailbox, org):
    browser = Browser(app)
    for result in (browser.get("/console/sign-in"), browser.get("/console/nowhere"), browser.sign_in(mailbox, org.admin.email)):
        csp = result.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert result.headers["cache-control"] == "no-store"
        assert result.headers["x-frame-options"] == "DENY"
        assert result.headers["referrer-policy"] == "no-referrer"


def _credential(app, browser):
    return app.context.sessions.load(browser.cookies["dps_console"]).credential


def test_sign_out_ends_the_session_and_the_api_refuses_its_credential(app, mailbox, org, api_origin, tls_files):
    browser = Browser(app)
    browser.sign_in(mailbox, org.admin.email)
    old_cookie = browser.cookies["dps_console"]
    credential = _credential(app, browser)
    whoami = requests.get(api_origin + "/external/v1/whoami", headers={"x-api-key": credential}, verify=tls_files["ca"])
    assert whoami.status_code == 200

    home = browser.get("/console")
    assert credential not in home.text and credential not in old_cookie  # the browser never sees it
    out = browser.post("/console/sign-out")
    assert out.status_code == 303
    assert out.headers["location"] == "/console/sign-in?signed_out=1"
    assert "dps_console" not in browser.cookies

    replay = Browser(app)
    replay.cookies["dps_console"] = old_cookie
    assert replay.get("/console").status_code == 303
    refused = requests.get(api_origin + "/external/v1/whoami", headers={"x-api-key": credential}, verify=tls_files["ca"])
    assert refused.status_code == 401


def test_an_idle_session_ends_and_its_credential_is_revoked(app, settings, tx, mailbox, org, api_origin, tls_files):
    browser = Browser(app)
    browser.sign_in(mailbox, org.user.email)
    credential = _credential(app, browser)

    still = Browser(build_http(settings, tx=tx, now=_later(29)))
    still.cookies = dict(browser.cookies)
    assert still.get("/console").status_code == 200  # 29 minutes idle: fine, and the clock restarts

    idle = Browser(build_http(settings, tx=tx, now=_later(29 + 31)))
    idle.cookies = dict(browser.cookies)
    ended = idle.get("/console")
    assert ended.status_code == 303
    assert ended.headers["location"] == "/console/sign-in"
    refused = requests.get(api_origin + "/external/v1/whoami", headers={"x-api-key": credential}, verify=tls_files["ca"])
    assert refused.status_code == 401


def test_a_session_ends_twelve_hours_after_sign_in_however_busy(app, settings, tx, mailbox, org):
    browser = Browser(app)
    browser.sign_in(mailbox, org.admin.email)
    for minutes in range(20, 12 * 60, 20):  # never idle
        busy = Browser(build_http(settings, tx=tx, now=_later(minutes)))
        busy.cookies = dict(browser.cookies)
        if minutes < 12 * 60 - 20:
            assert busy.get("/console").status_code == 200, minutes
    over = Browser(build_http(settings, tx=tx, now=_later(12 * 60 + 1)))
    over.cookies = dict(browser.cookies)
    assert over.get("/console").status_code == 303


def test_sign_in_requests_are_limited_per_email(make_settings, tx, mailbox, org):
    app = build_http(make_settings(CONSOLE_SIGN_IN_PER_EMAIL="2", CONSOLE_SIGN_IN_WINDOW_SECONDS="86400"), tx=tx)
    browser = Browser(app)
    browser.get("/console/sign-in")
    for _ in range(2):
        assert browser.post("/console/sign-in", {"email": "someone@limits.example"}).status_code == 303
        browser.get("/console/sign-in")
    limited = browser.post("/console/sign-in", {"email": "someone@limits.example"})
    assert limited.status_code == 429
    browser.get("/console/sign-in")
    assert browser.post("/console/sign-in", {"email": "another@limits.example"}).status_code == 303


def test_sign_in_requests_are_limited_per_client_address(make_settings, tx):
    app = build_http(make_settings(CONSOLE_SIGN_IN_PER_CLIENT="3", CONSOLE_SIGN_IN_WINDOW_SECONDS="86400"), tx=tx)
    browser = Browser(app)
    statuses = []
    for n in range(4):
        browser.get("/console/sign-in")
        statuses.append(browser.post("/console/sign-in", {"email": f"person{n}@limits.example"}).status_code)
    assert statuses == [303, 303, 303, 429]


def test_a_malformed_email_is_named_next_to_its_field(app):
    browser = Browser(app)
    browser.get("/console/sign-in")
    answer = browser.post("/console/sign-in", {"email": "not an email"})
    assert answer.status_code == 400
    assert 'aria-invalid="true"' in answer.text and 'id="email-errors"' in answer.text
    assert 'value="not an email"' in answer.text


def test_the_request_only_queues_the_mail_and_calls_no_service(app, mailbox, org, monkeypatch):
    """Known or not, the sign-in POST does the same work: it counts and queues, then answers; the
    api is asked and the mail sent later, by the queue's worker (here worked in the test's
    transaction). A mail sent within the request would let its answer's time tell known emails."""
    calls = watch_calls(monkeypatch, app.context.backends.internal)
    browser = Browser(app)
    for address in (org.user.email, "nobody@unknown.example"):
        before = len(mailbox.to(address))
        browser.get("/console/sign-in")
        answer = browser.post("/console/sign-in", {"email": address})
        assert (answer.status_code, answer.headers["location"]) == (303, "/console/sign-in/sent")
        assert calls == [] and len(mailbox.to(address)) == before  # nothing asked, nothing sent yet
    assert app.context.sign_in_mail.pending() == 2
    browser.send_mail()
    assert app.context.sign_in_mail.pending() == 0
    assert len(calls) == 2  # the worker asked the api about each
    assert mailbox.link_for(org.user.email) and mailbox.to("nobody@unknown.example") == []


def test_a_mail_server_that_is_down_is_tried_again_later(make_settings, settings, tx, mailbox, org):
    from sqlalchemy import select, update

    from dps_testing.processes import free_port

    from dps_console.db.models import SignInRequest

    down = build_http(make_settings(SMTP_URL=f"smtp://127.0.0.1:{free_port()}"), tx=tx)
    browser = Browser(down)
    answers = []
    for address in (org.admin.email, "nobody@unknown.example"):
        browser.get("/console/sign-in")
        answer = browser.post("/console/sign-in", {"email": address})
        answers.append((answer.status_code, answer.headers.get("location")))
    assert answers[0] == answers[1] == (303, "/console/sign-in/sent")
    sent_before = len(mailbox.to(org.admin.email))
    down.context.sign_in_mail.send_due()
    with tx.read() as session:  # the unknown email's request is done; the known one waits for a retry
        waiting = session.execute(select(SignInRequest.email, SignInRequest.attempts, SignInRequest.due_at)).all()
    assert [(w.email, w.attempts) for w in waiting] == [(org.admin.email, 1)]
    assert waiting[0].due_at is not None
    assert down.context.sign_in_mail.send_due() == 0  # not due yet

    with tx() as session:  # its retry is due; the mail server is back
        session.execute(update(SignInRequest).values(due_at=None))
    up = build_http(settings, tx=tx)
    assert up.context.sign_in_mail.send_due() == 1
    assert len(mailbox.to(org.admin.email)) == sent_before + 1
    assert up.context.sign_in_mail.pending() == 0


def test_the_command_line_prints_a_sign_in_link_for_a_known_person_only(settings_env, org):
    import os
    import subprocess
    import sys
    from pathlib import Path

    cli = str(Path(sys.executable).with_name("dealpricing-console"))
    env = {**os.environ, **settings_env}
    done = subprocess.run([cli, "sign-in-link", org.admin.email], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    link = done.stdout.strip()
    assert link.startswith("http://console.test/console/sign-in/link?token=")
    unknown = subprocess.run([cli, "sign-in-link", "nobody@unknown.example"], env=env, capture_output=True, text=True,
                             timeout=60)
    assert unknown.returncode == 1 and "no active user" in unknown.stderr
    # the printed link was committed by the command: it signs in
    from dps_testing.transactions import committed

    from dps_console.settings import Settings

    with committed(settings_env["DATABASE_URL"], "console-cli-test") as tx:
        browser = Browser(build_http(Settings.from_env(settings_env), tx=tx))
        assert browser.get(link).status_code == 200
        assert browser.post("/console/sign-in/link", {"token": _token_of(link)}).status_code == 303
        assert browser.get("/console").status_code == 200


def test_the_static_assets_are_the_consoles_own_and_the_root_takes_a_trailing_slash(app, mailbox, org):
    browser = Browser(app)
    css = browser.get("/console/static/console.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    script = browser.get("/console/static/copy.js")
    assert script.status_code == 200 and "clipboard" in script.text
    page = browser.get("/console/sign-in")
    assert "http" not in "".join(line for line in page.text.splitlines() if "<link" in line or "<script" in line)
    assert "<script>" not in page.text and "style=" not in page.text  # nothing inline (the CSP allows none)
    browser.sign_in(mailbox, org.admin.email)
    assert browser.get("/console/").status_code == 200


def test_a_console_token_the_api_refuses_is_a_502_not_an_ended_session(make_settings, settings, tx, mailbox, org):
    app = build_http(make_settings(CONSOLE_API_TOKEN="not-the-api-token-0123456789abcdefghij"), tx=tx)
    browser = Browser(app)
    browser.get("/console/sign-in")
    assert browser.post("/console/sign-in", {"email": org.admin.email}).status_code == 303  # queued
    assert app.context.sign_in_mail.send_due() == 1  # the worker's call is refused: kept for a retry
    assert app.context.sign_in_mail.pending() == 1

    link = build_http(settings, tx=tx).context.email_links.issue_link(org.admin.email)
    browser.get(link)
    answer = browser.post("/console/sign-in/link", {"token": _token_of(link)})
    assert answer.status_code == 502
    assert "did not answer" in answer.text
