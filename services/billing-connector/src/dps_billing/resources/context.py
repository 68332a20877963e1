"""What every resource module receives at registration: the settings, the paging cursors and the use
cases, put together by the composition root (``dps_billing.composition.build_http``); and the app's
transactions, for whoever disposes of its engine (the resources use none)."""

from __future__ import annotations

from dataclasses import dataclass

from dps_common.db import Transactions
from dps_common.paging import CursorCodec

from dps_billing.services.connect_flow import ConnectFlow
from dps_billing.services.connection import ConnectionService
from dps_billing.services.platform_events import PlatformEvents
from dps_billing.services.pushes import PushService
from dps_billing.settings import Settings


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    tx: Transactions
    cursors: CursorCodec
    connections: ConnectionService
    connect_flow: ConnectFlow
    platform_events: PlatformEvents
    pushes: PushService
