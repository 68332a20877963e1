"""The small HTML page the admin's browser lands on after the platform's redirect: what happened, in
words, and a link back. Never a stack trace; every value shown is escaped."""

from __future__ import annotations

from html import escape

_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Deal Pricing Service</title>
<style>body{{font-family:system-ui,sans-serif;line-height:1.5;max-width:40rem;margin:3rem auto;padding:0 1rem}}</style>
</head>
<body>
<main>
<h1>{title}</h1>
<p id="outcome" data-outcome="{reason}">{message}</p>
<p><a href="{back}">Back to the integration settings</a></p>
</main>
</body>
</html>
"""


def render_page(connected: bool, reason: str, message: str, back: str) -> str:
    title = "Billing platform connected" if connected else "Billing platform not connected"
    return _PAGE.format(title=escape(title), reason=escape(reason), message=escape(message), back=escape(back))
