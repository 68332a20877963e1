"""The console's layers and its process without HTTP, checked as every service's are
(``dps_testing.layers``): its domain imports no framework (no Falcon, SQLAlchemy, Jinja2,
requests), its use cases no Falcon or Jinja2 (the pages are the resources' business), and its
command line (``dealpricing-console purge`` / ``sign-in-link``), put together as it does, loads
neither."""

from __future__ import annotations

from dps_common.crypto import new_key
from dps_testing.layers_before import LayersSuite, Process, ServiceLayers

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
    layers = ServiceLayers(
        dps_console,
        entry_points=("app", "wsgi", "routes", "context", "composition", "cli", "worker"),
        processes=(
            Process(
                "command line",
                "dps_console.cli",
                "from dps_console.composition import make_context\n"
                "from dps_console.settings import Settings\n"
                "make_context(Settings.from_env())",
                ENV,
            ),
            Process(
                "mail worker",
                "dps_console.worker",
                "from dps_console.worker import MailWorker\n"
                "from dps_console.composition import make_context\n"
                "from dps_console.settings import Settings\n"
                "settings = Settings.from_env()\n"
                "MailWorker(settings, make_context(settings).sign_in_mail)",
                ENV,
            ),
        ),
    )
