"""``dealpricing-dev mailbox``, as ``make run`` starts it: a real SMTP client's mail is kept (across a
restart too) and shown on the page with everything escaped and only http(s) links as links."""

from __future__ import annotations

import json
import smtplib
import subprocess
import sys
import time
import urllib.request
from email.message import EmailMessage
from pathlib import Path

import pytest

from dps_testing.processes import free_port

BIN = Path(sys.executable).parent / "dealpricing-dev"


def _start(folder: Path) -> tuple[subprocess.Popen[bytes], str, int]:
    page, smtp = free_port(), free_port()
    process = subprocess.Popen([str(BIN), "mailbox", "--port", str(page), "--smtp-port", str(smtp),
                                "--folder", str(folder)])
    url = f"http://127.0.0.1:{page}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url + "/", timeout=2):
                return process, url, smtp
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, "the mailbox did not start"
            time.sleep(0.2)


@pytest.fixture
def mailbox(tmp_path):
    started: list[subprocess.Popen[bytes]] = []

    def start() -> tuple[str, int]:
        process, url, smtp = _start(tmp_path / "mail")
        started.append(process)
        return url, smtp

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=10)


def _send(smtp_port: int, to: str, subject: str, body: str) -> None:
    message = EmailMessage()
    message["From"] = "console@dealpricing.localhost"
    message["To"] = to
    message["Subject"] = subject
    message.set_content(body)
    with smtplib.SMTP("127.0.0.1", smtp_port, timeout=10) as smtp:
        smtp.send_message(message)


def test_mails_are_kept_and_shown_escaped_with_their_links(mailbox):
    url, smtp = mailbox()
    link = "http://127.0.0.1:8083/console/sign-in/link?token=abc&x=1"
    _send(smtp, "ada@example.test", "<script>alert(1)</script>", f"Open {link}\nnot this: javascript:alert(2)\n")
    _send(smtp, "sam@example.test", "for Sam", "no links here")
    with urllib.request.urlopen(url + "/", timeout=10) as answer:
        page = answer.read().decode()
        assert answer.headers["content-security-policy"] == "default-src 'none'"
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert '<a href="http://127.0.0.1:8083/console/sign-in/link?token=abc&amp;x=1">' in page
    assert 'href="javascript' not in page
    assert page.index("for Sam") < page.index("&lt;script&gt;")  # newest first
    with urllib.request.urlopen(url + "/messages.json?to=ADA@example.test", timeout=10) as answer:
        (mail,) = json.load(answer)["messages"]
    assert mail["to"] == ["ada@example.test"] and mail["links"] == [link]


def test_mails_survive_a_restart(mailbox, tmp_path):
    url, smtp = mailbox()
    _send(smtp, "ada@example.test", "kept", "http://example.test/a")
    assert len(list((tmp_path / "mail").glob("*.eml"))) == 1
    url, _ = mailbox()  # a second mailbox on the same folder, as the next `make run`
    with urllib.request.urlopen(url + "/messages.json", timeout=10) as answer:
        assert [m["subject"] for m in json.load(answer)["messages"]] == ["kept"]


def test_the_page_is_a_template_that_escapes_what_a_mail_holds():
    from dps_dev.mailbox import Mail, render_page

    hostile = Mail(id="1", sender='"Eve" <eve@example.test>', to=["<b>ada</b>@example.test"], subject="<img src=x onerror=1>",
                   date="today & tomorrow", text="</pre><script>alert(1)</script>",
                   links=["https://console.example/sign-in?token=a&b=<c>"])
    page = render_page([hostile])
    assert "<script>" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page and "today &amp; tomorrow" in page
    assert '<a href="https://console.example/sign-in?token=a&amp;b=&lt;c&gt;">' in page
    assert "&#34;Eve&#34; &lt;eve@example.test&gt;" in page
    assert "No mail yet" in render_page([]) and "(no subject)" in render_page([Mail("2", "", [], "", "", "", [])])
