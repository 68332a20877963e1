"""``dealpricing-dev mailbox``: ``make run``'s development mail. An SMTP sink (aiosmtpd) that accepts
every mail sent to it and delivers none, keeping each one as a file in ``.run/mail`` (they survive
restarts), and a page that shows them, newest first, with their links (the console's sign-in links).

- ``GET /``: the mails as plain HTML (``templates/mailbox.html``, autoescaped: everything a mail holds
  is escaped; only http(s) links are links; no script, no style, a CSP of ``default-src 'none'``).
- ``GET /messages.json``: the same as JSON (``?to=`` keeps the mails to one address); ``make run``
  reads the demo admin's sign-in link here.

It listens on HOST (this machine only by default): the mails hold sign-in links.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parseaddr
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from aiosmtpd.controller import Controller
from jinja2 import Environment, PackageLoader, select_autoescape

SHOWN = 50  # the newest mails the page and the JSON show
MAX_MAIL_BYTES = 1024 * 1024
LINK = re.compile(r"https?://[^\s<>\"']+")
_PAGES = Environment(
    loader=PackageLoader("dps_dev", "templates"), autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True, lstrip_blocks=True,
)


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("mailbox", help="the development SMTP sink and the page showing its mails")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8025, help="the mailbox page")
    parser.add_argument("--smtp-port", type=int, default=1025)
    parser.add_argument("--folder", type=Path, default=Path(".run") / "mail")


def main(args: argparse.Namespace) -> int:
    args.folder.mkdir(parents=True, exist_ok=True)
    handler = type("Handler", (_PageHandler,), {"folder": args.folder})
    try:
        page = ThreadingHTTPServer((args.host, args.port), handler)
    except OSError as exc:
        print(f"error: the mailbox page cannot listen on {args.host}:{args.port} ({exc.strerror})", file=sys.stderr)
        return 1
    smtp = Controller(Sink(args.folder), hostname=args.host, port=args.smtp_port, data_size_limit=MAX_MAIL_BYTES)
    try:
        smtp.start()
    except (OSError, RuntimeError) as exc:
        page.server_close()
        print(f"error: the SMTP sink cannot listen on {args.host}:{args.smtp_port} ({exc})", file=sys.stderr)
        return 1
    try:
        page.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        smtp.stop()
        page.server_close()
    return 0


class Sink:
    """aiosmtpd's handler: every mail kept whole, as it came, in a file of its own."""

    def __init__(self, folder: Path):
        self.folder = folder

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's naming)
        content = envelope.original_content or envelope.content
        raw = content if isinstance(content, bytes) else str(content).encode()
        save(self.folder, raw)
        return "250 Kept (development mailbox: nothing is delivered)"


def save(folder: Path, raw: bytes) -> Path:
    """Written whole before it appears under its name: the page never reads half a mail."""
    name = f"{time.time_ns():020d}-{os.getpid()}"
    tmp = folder / f".{name}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(raw)
    path = folder / f"{name}.eml"
    os.replace(tmp, path)
    return path


@dataclass(frozen=True)
class Mail:
    id: str
    sender: str
    to: list[str]
    subject: str
    date: str
    text: str
    links: list[str]

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "from": self.sender, "to": self.to, "subject": self.subject, "date": self.date,
                "text": self.text, "links": self.links}


def read_mails(folder: Path, to: str | None = None, limit: int = SHOWN) -> list[Mail]:
    """The newest mails first (their file names are their arrival times)."""
    mails: list[Mail] = []
    for path in sorted(folder.glob("*.eml"), reverse=True):
        try:
            mail = parse(path.stem, path.read_bytes())
        except OSError:
            continue
        if to is None or to.lower() in (address.lower() for address in mail.to):
            mails.append(mail)
        if len(mails) >= limit:
            break
    return mails


def parse(mail_id: str, raw: bytes) -> Mail:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    text = ""
    received = _received(mail_id)
    try:
        body = message.get_body(preferencelist=("plain", "html"))
        text = body.get_content() if body is not None else ""
    except (KeyError, LookupError, ValueError):
        text = raw.decode("utf-8", errors="replace")
    to = [parseaddr(part)[1] or part.strip() for part in str(message.get("To", "")).split(",") if part.strip()]
    return Mail(
        id=mail_id,
        sender=str(message.get("From", "")),
        to=to,
        subject=str(message.get("Subject", "")),
        date=str(message.get("Date", "")) or received,
        text=text,
        links=LINK.findall(text),
    )


def _received(mail_id: str) -> str:
    """When the sink kept the mail (its file name starts with the time in nanoseconds)."""
    stamp = mail_id.split("-", 1)[0]
    if not stamp.isdigit():
        return ""
    return datetime.fromtimestamp(int(stamp) / 1e9, UTC).strftime("received %Y-%m-%d %H:%M:%S UTC")


def render_page(mails: list[Mail]) -> str:
    return _PAGES.get_template("mailbox.html").render(mails=mails)


class _PageHandler(BaseHTTPRequestHandler):
    folder: Path = Path(".")

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        url = urlsplit(self.path)
        if url.path == "/":
            self._answer(200, "text/html; charset=utf-8", render_page(read_mails(self.folder)).encode())
        elif url.path == "/messages.json":
            wanted = parse_qs(url.query).get("to")
            to = wanted[0] if wanted else None
            mails = [mail.as_json() for mail in read_mails(self.folder, to)]
            self._answer(200, "application/json", json.dumps({"messages": mails}).encode())
        else:
            self._answer(404, "text/plain; charset=utf-8", b"not found\n")

    def _answer(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("content-security-policy", "default-src 'none'")
        self.send_header("cache-control", "no-store")
        self.send_header("x-content-type-options", "nosniff")
        self.send_header("referrer-policy", "no-referrer")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return
