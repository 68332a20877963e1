"""What every resource module receives at registration: the composition root's shared parts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from dps_common.db import Transactions
from dps_common.paging import CursorCodec

from dps_webhooks.settings import Settings
from dps_webhooks.signing_secrets import SecretSealer


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    tx: Transactions
    cursors: CursorCodec
    sealer: SecretSealer
    now: Callable[[], datetime]
