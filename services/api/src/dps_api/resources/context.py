"""What every resource module receives at registration: the shared parts ``composition.build_http`` made."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from dps_common.auth.authenticator import Authenticator
from dps_common.db import Transactions
from dps_common.paging import CursorCodec

from dps_api.services.outbox import Outbox
from dps_api.settings import Settings


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    tx: Transactions
    cursors: CursorCodec
    authenticator: Authenticator
    now: Callable[[], datetime]
    outbox: Outbox  # where the use cases record their events (the outbox adapter renders them)
