"""The banner's sign-in link for the demo admin, got the way a person gets one: the console's sign-in
form is opened (its pre-session cookie and CSRF token), the admin's email is sent with it, and the
mail the console sent is read from the development mailbox. No backdoor: if the console cannot mail
a link, the banner says so."""

from __future__ import annotations

import http.cookiejar
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from dps_dev.config import RunConfig

MAIL_WAIT_SECONDS = 15
CSRF_FIELD = re.compile(r'<input type="hidden" name="csrf" value="([0-9a-f]+)">')


class LinkUnavailable(Exception):
    pass


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 303 itself is the answer


def demo_sign_in_link(config: RunConfig, email: str) -> str:
    """A fresh one-time sign-in link for ``email``, mailed by the console and read from the mailbox."""
    console = config.console_url
    mailbox = config.origin("MAILBOX_PORT")
    seen = {mail["id"] for mail in _mails(mailbox, email)}
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirect)
    try:
        with opener.open(console + "/sign-in", timeout=10) as page:
            form = page.read().decode()
        token = CSRF_FIELD.search(form)
        if token is None:
            raise LinkUnavailable("the console's sign-in page has no form token")
        body = urllib.parse.urlencode({"email": email, "csrf": token.group(1)}).encode()
        request = urllib.request.Request(console + "/sign-in", data=body, method="POST", headers={
            "content-type": "application/x-www-form-urlencoded", "origin": config.public_origin})
        try:
            opener.open(request, timeout=30)
            raise LinkUnavailable("the console did not answer the sign-in form with a redirect")
        except urllib.error.HTTPError as answer:
            location = answer.headers.get("location", "")
            if answer.code != 303 or not location.endswith("/sign-in/sent"):
                raise LinkUnavailable(f"the console answered the sign-in form with {answer.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise LinkUnavailable(f"the console did not answer ({exc})") from None
    deadline = time.monotonic() + MAIL_WAIT_SECONDS
    while True:
        for mail in _mails(mailbox, email):
            links = [link for link in mail["links"] if link.startswith(console + "/sign-in/link?token=")]
            if mail["id"] not in seen and links:
                return str(links[0])
        if time.monotonic() > deadline:
            raise LinkUnavailable(f"no sign-in mail to {email} reached the mailbox in {MAIL_WAIT_SECONDS} s")
        time.sleep(0.3)


def _mails(mailbox: str, email: str) -> list[dict[str, Any]]:
    url = f"{mailbox}/messages.json?" + urllib.parse.urlencode({"to": email})
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            messages: list[dict[str, Any]] = json.load(answer)["messages"]
            return messages
    except (OSError, ValueError, KeyError) as exc:
        raise LinkUnavailable(f"the mailbox did not answer ({exc})") from None
