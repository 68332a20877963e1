"""Every route of the dispatcher, added in this one place (one module per resource)."""

from collections.abc import Callable

from dps_common.http.app import Api

from dps_webhooks.resources import deliveries, event_types, events, webhook_configs
from dps_webhooks.resources.context import AppContext

# Each resource module's ``register``, in the order their routes are added.
REGISTRATIONS: list[Callable[[Api, AppContext], None]] = [
    webhook_configs.register,
    deliveries.register,
    event_types.register,
    events.register,
]


def add_routes(api: Api, ctx: AppContext) -> None:
    for register in REGISTRATIONS:
        register(api, ctx)
