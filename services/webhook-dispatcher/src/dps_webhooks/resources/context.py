"""What every resource module receives at registration: the use cases, put together by the
composition root (``composition.build_http``), and what the resources themselves need."""

from __future__ import annotations

from dataclasses import dataclass

from dps_common.db import Transactions
from dps_common.paging import CursorCodec

from dps_webhooks.services.deliveries import DeliveryService
from dps_webhooks.services.endpoints import EndpointService
from dps_webhooks.settings import Settings


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    tx: Transactions  # the app's own: disposed of by whoever built it
    cursors: CursorCodec
    endpoints: EndpointService
    deliveries: DeliveryService
