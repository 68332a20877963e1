"""A real browser for the tests of what a person clicks: headless Chromium driven by Playwright.

Chromium is the system's (``/usr/bin/chromium``, Debian's package), never one Playwright downloads
(that needs the internet). Without it or Playwright a browser test skips, except under ``CI=true``
where that is a failure (``dps_testing.availability``). The plugin offers ``chromium`` (one
browser per session) and ``page`` (a fresh profile per test)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from dps_testing.availability import unavailable

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]
STEP_MS = 5_000  # every click, navigation and wait of a step


@contextmanager
def headless_chromium() -> Iterator[Browser]:
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError as exc:
        unavailable(f"the browser tests need Playwright (pip install playwright): {exc}")
    if shutil.which(CHROMIUM) is None:
        unavailable(f"the browser tests need Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=15_000)
        except Error as exc:
            unavailable(f"the browser tests need a Chromium that starts ({CHROMIUM}): {exc.message}")
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def fresh_page(browser: Browser) -> Iterator[Page]:
    """A new profile (no cookies, no history) whose every step waits at most ``STEP_MS``."""
    context = browser.new_context()
    context.set_default_timeout(STEP_MS)
    context.set_default_navigation_timeout(STEP_MS)
    try:
        yield context.new_page()
    finally:
        context.close()
