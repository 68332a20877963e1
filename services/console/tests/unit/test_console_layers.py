"""The console's layers, checked by the one table of rules every service's are (``dps_testing.layers``,
no exceptions of its own): among others, the pages reach the three services only through the use
cases' ports (``services.ports.ServiceApis``, which the composition root fills with the adapter),
and the command line (``dealpricing-console purge`` / ``sign-in-link``) and the mail worker
(``dealpricing-console worker``), put together by ``composition`` as they are, load no HTTP framework."""

from __future__ import annotations

from dps_common.crypto import new_key
from dps_testing.layers import LayersSuite, Process, ServiceLayers

import dps_console

ENV = {
    "DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/dps_console_layers",
    "API_URL": "http://127.0.0.1:9",
    "API_INTERNAL_URL": "http://127.0.0.1:9",
    "WEBHOOKS_URL": "http://127.0.0.1:9",
    "BILLING_URL": "http://127.0.0.1:9",
    "CONSOLE_API_TOKEN": "layers-console-token-0123456789abcdef",
    "CONSOLE_PUBLIC_URL": "https://app.example/console",
    "CONSOLE_SECRET_KEY": new_key(),
    "SMTP_URL": "smtp://127.0.0.1:25",
    "MAIL_FROM": "console@example.test",
}


class TestLayers(LayersSuite):
    layers = ServiceLayers(dps_console, processes=(
        Process("command line", "build_chores", ENV),  # dealpricing-console purge / sign-in-link
        Process("mail worker", "build_mail_worker", ENV),  # dealpricing-console worker
    ))
