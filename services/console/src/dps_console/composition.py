"""What the console's processes are built from: ``make_context`` puts together the parts the pages
(``app``), the chores of ``dealpricing-console`` (``cli``: purge, sign-in links) and its mail worker
(``worker``) use. No HTTP framework here: the command line imports this module, never ``app``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from dps_common.bootstrap import make_transactions
from dps_common.clock import utc_now
from dps_common.crypto import SecretBox
from dps_common.db import Transactions

from dps_console.context import AppContext
from dps_console.domain.keys import ConsoleKeys
from dps_console.services.backends import Backends
from dps_console.services.catalogue import EventCatalogue
from dps_console.services.credentials import ConsoleCredentials
from dps_console.services.form_results import FormResults
from dps_console.services.mail import Mailer, SmtpMailer
from dps_console.services.sessions import Sessions
from dps_console.services.sign_in import EmailLinks, RateLimits
from dps_console.services.sign_in_mail import SignInMail
from dps_console.settings import Settings


def make_context(settings: Settings, *, tx: Transactions | None = None, mailer: Mailer | None = None,
                 now: Callable[[], datetime] = utc_now) -> AppContext:
    tx = tx or make_transactions(settings, "dps-console")
    keys = ConsoleKeys.from_secret(settings.secret_key)
    backends = Backends.from_urls(
        settings.api_url, settings.api_internal_url, settings.webhooks_url, settings.billing_url,
        verify=settings.api_ca_file or True, timeout=settings.service_timeout_seconds,
    )
    credentials = ConsoleCredentials(backends.internal, settings.console_api_token)
    limits = RateLimits(settings.sign_in_per_email, settings.sign_in_per_client, settings.sign_in_window_seconds)
    email_links = EmailLinks(tx, credentials, mailer or SmtpMailer(settings.smtp_url, settings.mail_from),
                             settings.public_url, limits, now)
    return AppContext(
        settings=settings,
        tx=tx,
        keys=keys,
        backends=backends,
        sessions=Sessions(tx, SecretBox(keys.credentials), credentials, now),
        email_links=email_links,
        sign_in_mail=SignInMail(tx, email_links, now),
        form_results=FormResults(tx, SecretBox(keys.shown_once), now),
        catalogue=EventCatalogue(backends.webhooks),
        now=now,
    )
