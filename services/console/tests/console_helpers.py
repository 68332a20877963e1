"""The console's test helpers: a real SMTP server (aiosmtpd) keeping what it receives, and a browser
stand-in over ``falcon.testing`` that keeps cookies and sends each form's CSRF and one-time tokens
back. The sign-in mail is queued by the pages and sent by a worker: the stand-in works the queue in
its own transaction (``send_mail``); the browser suite's mailbox waits for its worker (``settle``)."""

from __future__ import annotations

import email
import email.policy
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any
from urllib.parse import urlencode, urlsplit

import falcon.testing
import pytest
from aiosmtpd.controller import Controller

from dps_testing.processes import free_port

from dps_console.domain.tokens import new_token

CSRF = re.compile(r'name="csrf" value="([^"]*)"')
FORM = re.compile(r'<form method="post" action="([^"]*)"[^>]*>(.*?)</form>', re.S)
ONCE = re.compile(r'name="once" value="([^"]*)"')
LINK = re.compile(r"https?://\S+/sign-in/link\?token=[A-Za-z0-9_-]+")


@dataclass
class Mailbox:
    url: str
    messages: list[EmailMessage] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    settle: Callable[[], None] = lambda: None  # waits until the queued sign-in mails are sent

    def to(self, address: str) -> list[EmailMessage]:
        self.settle()
        with self.lock:
            return [m for m in self.messages if m["To"] == address]

    def link_for(self, address: str) -> str:
        """The sign-in link of the latest mail to ``address`` (the request that sent it has returned)."""
        mails = self.to(address)
        assert mails, f"no mail to {address}"
        body = mails[-1].get_content()
        found = LINK.search(body)
        assert found, body
        return found.group(0)


class _Handler:
    def __init__(self, box: Mailbox):
        self._box = box

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        with self._box.lock:
            self._box.messages.append(message)
        return "250 Message accepted for delivery"


@contextmanager
def start_mailbox() -> Iterator[Mailbox]:
    port = free_port()
    box = Mailbox(f"smtp://127.0.0.1:{port}")
    controller = Controller(_Handler(box), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()


class Browser:
    """Cookies kept between requests (a cookie set with max-age 0 is dropped), and the last page's
    CSRF token sent with each form."""

    def __init__(self, app: falcon.App[falcon.Request, falcon.Response], origin: str = "http://console.test"):
        self.app = app
        self.client = falcon.testing.TestClient(app)
        self.origin = origin
        self.cookies: dict[str, str] = {}
        self.last: falcon.testing.Result | None = None

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = dict(extra or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return headers

    def _keep(self, result: falcon.testing.Result) -> falcon.testing.Result:
        # as a browser does: a cookie goes only when it expires (an empty value is a value)
        for name, cookie in result.cookies.items():
            if cookie.max_age == 0 or (cookie.expires is not None and cookie.expires <= datetime.now(UTC)):
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = cookie.value
        self.last = result
        return result

    def get(self, url: str, headers: dict[str, str] | None = None) -> falcon.testing.Result:
        """A GET; a page of buttons opened without its view token is followed to its view (``?view=``)."""
        parts = urlsplit(url)
        result = self._keep(self.client.simulate_get(parts.path, query_string=parts.query or None,
                                                     headers=self._headers(headers)))
        location = urlsplit(result.headers.get("location") or "")
        if result.status_code == 303 and location.path == parts.path and "view=" in location.query:
            return self.get(result.headers["location"], headers)
        return result

    def open(self, url: str) -> falcon.testing.Result:
        """A GET that follows the console's redirects (a page that is one form adds its token to its address)."""
        result = self.get(url)
        for _ in range(5):
            if result.status_code not in (302, 303):
                break
            result = self.get(result.headers["location"])
        return result

    def once(self, action: str) -> str:
        """The one-time token of the last page's form posting to ``action``; a fresh one if it has none."""
        assert self.last is not None
        for target, body in FORM.findall(self.last.text):
            found = ONCE.search(body)
            if target == action and found:
                return found.group(1)
        return new_token()

    def send_mail(self) -> None:
        """What the mail worker does, in this app's transaction: every queued sign-in mail sent."""
        while self.app.context.sign_in_mail.send_due():
            pass

    def csrf(self) -> str:
        assert self.last is not None
        found = CSRF.search(self.last.text)
        assert found, "no form with a CSRF token on the last page"
        return found.group(1)

    def post(self, url: str, form: dict[str, Any] | list[tuple[str, str]] | None = None, *,
             csrf: str | None = None, once: str | None = None,
             headers: dict[str, str] | None = None) -> falcon.testing.Result:
        fields = list(form.items()) if isinstance(form, dict) else list(form or [])
        token = self.csrf() if csrf is None else csrf
        if token:
            fields.append(("csrf", token))
        fields.append(("once", self.once(urlsplit(url).path) if once is None else once))
        return self._keep(self.client.simulate_post(
            urlsplit(url).path, body=urlencode(fields),
            headers={"Content-Type": "application/x-www-form-urlencoded", **self._headers(headers)},
        ))

    def sign_in(self, mailbox: Mailbox, address: str) -> falcon.testing.Result:
        """The whole flow: ask for a link, open it from the mail, press Sign in."""
        self.get("/console/sign-in")
        asked = self.post("/console/sign-in", {"email": address})
        assert asked.status_code == 303, asked.text
        self.send_mail()
        self.get(mailbox.link_for(address))
        assert self.last is not None and self.last.status_code == 200, self.last.text if self.last else None
        done = self.post("/console/sign-in/link", {"token": _token_of(mailbox.link_for(address))})
        assert done.status_code == 303, done.text
        return done


def watch_calls(monkeypatch: pytest.MonkeyPatch, *backends: Any) -> list[tuple[str, str]]:
    """Each call the app's ``backends`` (``adapters.backends.Backend``) make from now on, as
    (service, path): the api's public and internal operations both count as the api's."""
    calls: list[tuple[str, str]] = []
    for backend in backends:
        monkeypatch.setattr(backend, "call", _watched(backend.name, backend.call, calls))
    return calls


def _watched(service: str, call: Callable[..., Any], calls: list[tuple[str, str]]) -> Callable[..., Any]:
    def watched(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        calls.append((service, path))
        return call(method, path, *args, **kwargs)

    return watched


def _token_of(link: str) -> str:
    return link.rsplit("token=", 1)[1]


@contextmanager
def served(app: Any) -> Iterator[str]:
    """A WSGI app on a real socket (threaded), for the other services the console calls."""
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            pass

    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)
        server.server_close()


class _Late:
    """A WSGI app set after its server is bound (the connector needs its own URL first)."""

    app: Any = None

    def __call__(self, environ: Any, start_response: Any) -> Any:
        return self.app(environ, start_response)


@contextmanager
def late_served() -> Iterator[tuple[str, _Late]]:
    late = _Late()
    with served(late) as origin:
        yield origin, late
