"""The stand-in's pages are Jinja2 templates, autoescaped: whatever a client sent (an app name, a
redirect URI, a quote's description and metadata, an account id) is shown as text, and the install
form keeps the markup the connector's tests and the contract suite read."""

from __future__ import annotations

import re

from dps_billing_stand_in import pages
from dps_billing_stand_in.webhooks import WebhookDelivery

EVIL = '<script>alert("x")</script>'


def test_the_install_page_escapes_and_keeps_its_form() -> None:
    page = pages.authorize_page("/oauth/authorize", EVIL, "ca_1", 'https://app.example/cb?a=1&b="2"', "st&te")
    assert "<script>" not in page and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert re.search(r'<form method=post action="([^"]*)">', page).group(1) == "/oauth/authorize"  # type: ignore[union-attr]
    hidden = dict(re.findall(r'<input type=hidden name=(\w+) value="([^"]*)">', page))
    assert hidden == {"client_id": "ca_1", "redirect_uri": "https://app.example/cb?a=1&amp;b=&#34;2&#34;", "state": "st&amp;te"}
    assert "<title>Install &lt;script&gt;" in page and 'name=decision value=install' in page
    assert "state" not in dict(re.findall(r'<input type=hidden name=(\w+) value="([^"]*)">',
                                          pages.authorize_page("/a", "App", "ca_1", "https://x/cb", None)))


def test_the_review_page_escapes_what_the_quote_holds() -> None:
    quote = {"id": "qt_1", "status": "draft", "description": EVIL, "currency": "usd", "amount_total": 1200,
             "expires_at": 0, "created": None, "metadata": {EVIL: "<b>v</b>"},
             "subscription_data": {"effective_date": None, "metadata": {}}}
    item = {"description": "<i>Widget</i>", "price": {"id": "price_1", "unit_amount_decimal": "12.5",
                                                      "recurring": {"interval_count": 1, "interval": "month"}},
            "quantity": 2, "amount_total": 2500}
    page = pages.review_page("acct_<1>", quote, [item])
    assert not re.search(r"<(script|b|i)>", page)
    assert "&lt;i&gt;Widget&lt;/i&gt;" in page and "acct_&lt;1&gt;" in page and "&lt;b&gt;v&lt;/b&gt;" in page
    assert "1970-01-01 00:00 UTC (0)" in page and "every 1 month(s)" in page and "<p>-</p>" in page  # no subscription metadata


def test_the_control_page_and_the_error_page_escape() -> None:
    delivery = WebhookDelivery(event_id="evt_1", event_type="quote.created", account="acct_1", url=None, payload="{}",
                               signature=None, status=None, error=EVIL, response_body=None, at=0.0)
    page = pages.control_page({"API": "http://127.0.0.1:1"}, ['acct_"1'], [("acct_1", {"id": "qt_<1>", "description": None,
                              "currency": None, "amount_total": 0})], [delivery])
    assert "<script>" not in page and 'action="/accounts/acct_&#34;1/uninstall"' in page
    assert '<a href="/quotes/qt_&lt;1&gt;">' in page and "<td>-</td>" in page
    assert "no account yet" in pages.control_page({}, [], [], [])
    error = pages.error_page("Bad <request>", EVIL)
    assert "<title>Bad &lt;request&gt;</title>" in error and "<p>&lt;script&gt;" in error
