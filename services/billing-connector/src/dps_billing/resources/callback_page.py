"""The small HTML page the admin's browser lands on after the platform's redirect (or a start link
that no longer works): what happened, in words, and a link back. Never a stack trace; a Jinja2
template (``templates/callback.html``) with autoescape on, so every value shown is escaped."""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, select_autoescape

_TEMPLATES = Environment(
    loader=PackageLoader("dps_billing", "resources/templates"),
    autoescape=select_autoescape(["html"], default_for_string=True, default=True),
)


def callback_html(connected: bool, reason: str, message: str, back: str) -> str:
    title = "Billing platform connected" if connected else "Billing platform not connected"
    return _TEMPLATES.get_template("callback.html").render(title=title, reason=reason, message=message, back=back)
