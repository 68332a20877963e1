"""What every resource module receives at registration: the parts the composition root
(``dps_console.composition.build_http``) put together: the use cases, the three services (as the
port ``ServiceApis``) and a pool to call them side by side (``Alongside``), the console's keys, the
settings and the clock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from dps_common.db import Transactions

from dps_console.domain.keys import ConsoleKeys
from dps_console.services.catalogue import EventCatalogue
from dps_console.services.form_results import FormResults
from dps_console.services.ports import Alongside, ServiceApis
from dps_console.services.sessions import Sessions
from dps_console.services.sign_in import EmailLinks
from dps_console.services.sign_in_mail import SignInMail
from dps_console.settings import Settings


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    tx: Transactions
    keys: ConsoleKeys
    backends: ServiceApis
    alongside: Alongside  # a page's independent calls to the services, side by side
    sessions: Sessions
    email_links: EmailLinks
    sign_in_mail: SignInMail
    form_results: FormResults
    catalogue: EventCatalogue
    now: Callable[[], datetime]
