"""Every page of the console, added in this one place (one module per section)."""

from __future__ import annotations

from types import ModuleType

import falcon

from dps_console.resources import auth, billing, forms, keys, team, webhooks
from dps_console.resources.context import AppContext
from dps_console.resources.web import Cookies, Renderer

RESOURCE_MODULES: list[ModuleType] = [auth, forms, keys, team, webhooks, billing]


def add_routes(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer,
               cookies: Cookies) -> None:
    for module in RESOURCE_MODULES:
        module.register(app, ctx, renderer, cookies)
