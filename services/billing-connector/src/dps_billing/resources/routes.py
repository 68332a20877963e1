"""Every route of the connector, added in this one place (one module per resource)."""

from types import ModuleType

from dps_common.http.app import Api

from dps_billing.resources import connection, platform_webhooks, pushes
from dps_billing.resources.context import AppContext

RESOURCE_MODULES: list[ModuleType] = [connection, platform_webhooks, pushes]


def add_routes(api: Api, ctx: AppContext) -> None:
    for module in RESOURCE_MODULES:
        module.register(api, ctx)
