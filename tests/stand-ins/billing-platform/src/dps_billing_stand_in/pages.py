"""The stand-in's HTML: the marketplace's install page, the quote review page (the dashboard's
equivalent), the control page of `make run`, and error pages. Plain forms, no JavaScript; Jinja2
templates (``templates/``), autoescaped: every value a client sent is shown as text."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from .webhooks import WebhookDelivery


def _when(stamp: int | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d %H:%M UTC") + f" ({stamp})"


def _period(recurring: dict[str, Any] | None) -> str:
    if recurring is None:
        return "once"
    return f"every {recurring['interval_count']} {recurring['interval']}(s)"


_TEMPLATES = Environment(
    loader=PackageLoader("dps_billing_stand_in", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_TEMPLATES.filters.update(when=_when, period=_period)


def _render(template: str, title: str, **values: Any) -> str:
    return _TEMPLATES.get_template(template).render(title=title, **values)


def error_page(title: str, detail: str) -> str:
    return _render("error.html", title, detail=detail)


def authorize_page(action: str, app_name: str, client_id: str, redirect_uri: str, state: str | None) -> str:
    hidden = [(name, value) for name, value in (("client_id", client_id), ("redirect_uri", redirect_uri), ("state", state))
              if value is not None]
    return _render("authorize.html", f"Install {app_name}", action=action, app_name=app_name, client_id=client_id,
                   hidden=hidden)


def review_page(account: str, quote: dict[str, Any], line_items: list[dict[str, Any]]) -> str:
    return _render("review.html", f"Quote {quote['id']} ({quote['status']})", account=account, quote=quote,
                   line_items=line_items)


def control_page(
    urls: dict[str, str],
    accounts: list[str],
    quotes: list[tuple[str, dict[str, Any]]],
    deliveries: list[WebhookDelivery],
) -> str:
    return _render("control.html", "Billing platform stand-in", urls=urls, accounts=accounts, quotes=quotes,
                   deliveries=deliveries)
