"""What a service tells the test plugin about itself (see ``dps_testing.plugin``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import falcon
from sqlalchemy import MetaData

from dps_common.db import Transactions

WsgiApp = falcon.App[falcon.Request, falcon.Response]
SettingsT = TypeVar("SettingsT")
SettingsT_contra = TypeVar("SettingsT_contra", contravariant=True)


class AppFactory(Protocol[SettingsT_contra]):
    """A service's composition root, as the tests call it: ``create_app(settings, tx=tx)``."""

    def __call__(self, settings: SettingsT_contra, /, *, tx: Transactions) -> WsgiApp: ...


@dataclass(frozen=True)
class ServiceUnderTest(Generic[SettingsT]):
    """``package`` holds ``alembic.ini`` and ``migrations/`` (run by ``dps_common.migrations``);
    ``metadata`` has every model of the service on it (import the models module first);
    ``create_app`` is the service's composition root."""

    package: str
    metadata: MetaData
    create_app: AppFactory[SettingsT]
