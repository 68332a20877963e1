"""The stand-in's HTML: the marketplace's install page, the quote review page (the dashboard's
equivalent), the control page of `make run`, and error pages. Plain forms, no JavaScript."""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from typing import Any

from .webhooks import WebhookDelivery

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}"
    ".banner{background:#fff3cd;padding:.5rem 1rem;border:1px solid #e0c060}"
    "button{padding:.4rem 1.2rem;margin-right:.5rem}"
)


def page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body>"
        "<p class=banner>Billing platform stand-in: a test double of Stripe, not the real platform.</p>"
        f"<h1>{escape(title)}</h1>{body}</body></html>"
    )


def error_page(title: str, detail: str) -> str:
    return page(title, f"<p>{escape(detail)}</p>")


def authorize_page(action: str, app_name: str, client_id: str, redirect_uri: str, state: str | None) -> str:
    hidden = "".join(
        f"<input type=hidden name={name} value=\"{escape(value)}\">"
        for name, value in (("client_id", client_id), ("redirect_uri", redirect_uri), ("state", state))
        if value is not None
    )
    return page(
        f"Install {app_name}",
        f"<p><b>{escape(app_name)}</b> ({escape(client_id)}) asks to be installed in your account. It will be "
        "able to read events, customers, invoices, subscriptions, quotes, products and prices, and to write "
        "subscriptions, quotes, products and prices.</p>"
        f"<form method=post action=\"{escape(action)}\">{hidden}"
        "<p><label>Account (leave empty for a new one): <input name=account placeholder=acct_...></label></p>"
        "<button name=decision value=install>Install</button>"
        "<button name=decision value=cancel>Cancel</button></form>",
    )


def _when(stamp: int | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d %H:%M UTC") + f" ({stamp})"


def _pairs(mapping: dict[str, Any]) -> str:
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in mapping.items())
    return f"<table>{rows}</table>" if rows else "<p>-</p>"


def review_page(account: str, quote: dict[str, Any], line_items: list[dict[str, Any]]) -> str:
    lines = "".join(
        "<tr>"
        f"<td>{escape(item['description'] or '')}</td><td>{escape(item['price']['id'])}</td>"
        f"<td>{escape(str(item['price']['unit_amount_decimal']))}</td>"
        f"<td>{escape(_period(item['price']['recurring']))}</td>"
        f"<td>{item['quantity']}</td><td>{item['amount_total']}</td></tr>"
        for item in line_items
    )
    subscription = quote["subscription_data"]
    return page(
        f"Quote {quote['id']} ({quote['status']})",
        _pairs(
            {
                "Account": account,
                "Description": quote["description"] or "-",
                "Currency": quote["currency"] or "-",
                "Total now (minor units)": quote["amount_total"],
                "Expires": _when(quote["expires_at"]),
                "Subscription starts": _when(subscription["effective_date"]),
                "Created": _when(quote["created"]),
            }
        )
        + "<h2>Line items</h2><table><tr><th>Product</th><th>Price</th><th>Unit amount (minor units)</th>"
        f"<th>Billed</th><th>Quantity</th><th>Amount</th></tr>{lines}</table>"
        + "<h2>Metadata</h2>"
        + _pairs(quote["metadata"])
        + "<h2>Subscription metadata</h2>"
        + _pairs(subscription["metadata"])
        + "<p>Finalising, accepting and sending quotes are not part of the stand-in.</p>",
    )


def _period(recurring: dict[str, Any] | None) -> str:
    if recurring is None:
        return "once"
    return f"every {recurring['interval_count']} {recurring['interval']}(s)"


def control_page(
    urls: dict[str, str],
    accounts: list[str],
    quotes: list[tuple[str, dict[str, Any]]],
    deliveries: list[WebhookDelivery],
) -> str:
    account_rows = "".join(
        f"<tr><td>{escape(a)}</td><td><form method=post action=\"/accounts/{escape(a)}/uninstall\">"
        "<button>Uninstall</button></form></td></tr>"
        for a in accounts
    )
    quote_rows = "".join(
        f"<tr><td><a href=\"/quotes/{escape(q['id'])}\">{escape(q['id'])}</a></td><td>{escape(acct)}</td>"
        f"<td>{escape(q['description'] or '')}</td><td>{escape(q['currency'] or '')}</td>"
        f"<td>{q['amount_total']}</td></tr>"
        for acct, q in reversed(quotes)
    )
    delivery_rows = "".join(
        f"<tr><td>{escape(d.event_type)}</td><td>{escape(d.account)}</td><td>{d.status or '-'}</td>"
        f"<td>{escape(d.error or '')}</td></tr>"
        for d in reversed(deliveries)
    )
    return page(
        "Billing platform stand-in",
        _pairs(urls)
        + f"<h2>Installed in</h2><table>{account_rows or '<tr><td>no account yet</td></tr>'}</table>"
        + "<h2>Quotes</h2><table><tr><th>Quote</th><th>Account</th><th>Description</th><th>Currency</th>"
        f"<th>Total</th></tr>{quote_rows}</table>"
        + "<h2>Webhook deliveries</h2><table><tr><th>Event</th><th>Account</th><th>Status</th><th>Error</th></tr>"
        f"{delivery_rows}</table>",
    )
