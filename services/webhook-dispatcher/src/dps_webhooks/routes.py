"""Every route of the dispatcher, added in this one place (one module per resource)."""

from dps_common.http.app import Api

from dps_webhooks.context import AppContext

RESOURCE_MODULES: list = []


def add_routes(api: Api, ctx: AppContext) -> None:
    for module in RESOURCE_MODULES:
        module.register(api, ctx)
