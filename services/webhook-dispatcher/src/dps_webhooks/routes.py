"""Every route of the dispatcher, added in this one place (one module per resource)."""

from dps_common.http.app import Api

from dps_webhooks.context import AppContext
from dps_webhooks.resources import deliveries, webhook_configs

RESOURCE_MODULES: list = [webhook_configs, deliveries]


def add_routes(api: Api, ctx: AppContext) -> None:
    for module in RESOURCE_MODULES:
        module.register(api, ctx)
