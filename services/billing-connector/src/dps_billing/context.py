"""What every resource module receives at registration: the composition root's shared parts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from dps_common.db import Transactions
from dps_common.paging import CursorCodec

from dps_billing.services.ports import OAuthApp
from dps_billing.settings import Settings
from dps_billing.snapshots import SnapshotReader
from dps_billing.tokens import TokenSealer


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    tx: Transactions
    cursors: CursorCodec
    sealer: TokenSealer
    oauth: OAuthApp
    snapshots: SnapshotReader
    now: Callable[[], datetime]
