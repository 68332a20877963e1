"""Mail out by SMTP (SMTP_URL): smtp://host:port plain, smtps:// over TLS, smtp+starttls:// upgraded;
``user:password@`` logs in. ``SmtpMailer`` is the use cases' ``services.ports.Mailer``."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit


class SmtpMailer:
    def __init__(self, smtp_url: str, mail_from: str, timeout: float = 10.0):
        parts = urlsplit(smtp_url)
        self._scheme = parts.scheme
        self._host = parts.hostname or "localhost"
        self._port = parts.port or (465 if parts.scheme == "smtps" else 25)
        self._user = unquote(parts.username) if parts.username else None
        self._password = unquote(parts.password) if parts.password else ""
        self._from = mail_from
        self._timeout = timeout

    def send(self, to: str, subject: str, body: str) -> None:
        message = EmailMessage()
        message["From"] = self._from
        message["To"] = to
        message["Subject"] = subject
        message.set_content(body)
        smtp: smtplib.SMTP
        if self._scheme == "smtps":
            smtp = smtplib.SMTP_SSL(self._host, self._port, timeout=self._timeout, context=ssl.create_default_context())
        else:
            smtp = smtplib.SMTP(self._host, self._port, timeout=self._timeout)
        with smtp:
            if self._scheme == "smtp+starttls":
                smtp.starttls(context=ssl.create_default_context())
            if self._user:
                smtp.login(self._user, self._password)
            smtp.send_message(message)
