"""The console's composition root: every process is put together here, and only here.

- ``build_http(settings)``: the pages (gunicorn's ``dps_console.wsgi:create()``; the tests, which
  pass their own ``tx`` and may pass a ``mailer`` or a clock);
- ``build_mail_worker(settings)``: the sign-in mail worker of ``dealpricing-console worker``;
- ``build_chores(settings)``: the operator's commands of ``dealpricing-console`` (``purge``,
  ``sign-in-link``).

Nothing connects at import. The HTTP side (Falcon, Jinja2, the resources) is imported inside
``build_http`` only: the command line imports this module and loads none of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from dps_common.bootstrap import make_transactions
from dps_common.clock import utc_now
from dps_common.crypto import SecretBox
from dps_common.db import Transactions

from dps_console.adapters.backends import Backends
from dps_console.adapters.concurrent_calls import ConcurrentCalls
from dps_console.adapters.console_credentials import ConsoleCredentials
from dps_console.adapters.mail import SmtpMailer
from dps_console.domain.keys import ConsoleKeys
from dps_console.services.catalogue import EventCatalogue
from dps_console.services.form_results import FormResults
from dps_console.services.housekeeping import Purged, purge
from dps_console.services.ports import Mailer
from dps_console.services.sessions import Sessions
from dps_console.services.sign_in import EmailLinks, RateLimits
from dps_console.services.sign_in_mail import SignInMail
from dps_console.settings import Settings
from dps_console.workers.mail import MailWorker

if TYPE_CHECKING:
    import falcon

# Threads (greenlets under gevent) per process for a page's calls made side by side: the endpoint
# page's two, the pushes page's quote names. Small: a call the pool has not started when its page
# needs it is made in the page's own thread instead, so the bound never makes a page wait longer.
CALLS_ALONGSIDE = 8


@dataclass(frozen=True)
class _Parts:
    """What every process of the console is made of."""

    tx: Transactions
    keys: ConsoleKeys
    backends: Backends
    credentials: ConsoleCredentials
    email_links: EmailLinks
    now: Callable[[], datetime]


def _parts(settings: Settings, process: str, *, tx: Transactions | None = None, mailer: Mailer | None = None,
           now: Callable[[], datetime] = utc_now) -> _Parts:
    tx = tx or make_transactions(settings, process)
    backends = Backends.from_urls(
        settings.api_url, settings.api_internal_url, settings.webhooks_url, settings.billing_url,
        verify=settings.api_ca_file or True, timeout=settings.service_timeout_seconds,
    )
    credentials = ConsoleCredentials(backends.internal, settings.console_api_token)
    limits = RateLimits(settings.sign_in_per_email, settings.sign_in_per_client, settings.sign_in_window_seconds)
    email_links = EmailLinks(tx, credentials, mailer or SmtpMailer(settings.smtp_url, settings.mail_from),
                             settings.public_url, limits, now)
    return _Parts(tx, ConsoleKeys.from_secret(settings.secret_key), backends, credentials, email_links, now)


def build_http(settings: Settings, *, tx: Transactions | None = None, mailer: Mailer | None = None,
               now: Callable[[], datetime] = utc_now) -> falcon.App[falcon.Request, falcon.Response]:
    """The console's Falcon app; its ``context`` is the ``AppContext`` the pages receive."""
    from dps_console.resources.app import create_app
    from dps_console.resources.context import AppContext

    parts = _parts(settings, "dps-console-http", tx=tx, mailer=mailer, now=now)
    tx, keys = parts.tx, parts.keys
    return create_app(AppContext(
        settings=settings,
        tx=tx,
        keys=keys,
        backends=parts.backends,
        alongside=ConcurrentCalls(CALLS_ALONGSIDE),
        sessions=Sessions(tx, SecretBox(keys.credentials), parts.credentials, now),
        email_links=parts.email_links,
        sign_in_mail=SignInMail(tx, parts.email_links, now),
        form_results=FormResults(tx, SecretBox(keys.shown_once), now),
        catalogue=EventCatalogue(parts.backends.webhooks),
        now=now,
    ))


def build_mail_worker(settings: Settings) -> MailWorker:
    parts = _parts(settings, "dps-console-worker")
    return MailWorker(settings, SignInMail(parts.tx, parts.email_links, parts.now), close=parts.tx.dispose)


@dataclass(frozen=True)
class Chores:
    """The operator's commands: ``purge`` (rows over for a day), ``sign_in_link`` (a one-time link
    for a known person, without mail: ``EmailLinks.operator_link``); ``close`` ends the connections."""

    purge: Callable[[], Purged]
    sign_in_link: Callable[[str], str]
    close: Callable[[], None]


def build_chores(settings: Settings) -> Chores:
    parts = _parts(settings, "dps-console-cli")
    return Chores(purge=lambda: purge(parts.tx, parts.now()), sign_in_link=parts.email_links.operator_link,
                  close=parts.tx.dispose)
