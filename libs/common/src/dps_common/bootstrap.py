"""What every service's processes are put together from, out of the shared settings
(``dps_common.bootstrap_settings``): a process's start (its settings read, its logs configured), its
database transactions, and the API key check of a service whose keys the api holds. No HTTP
framework here: the workers import this module too (``bootstrap_http`` has the app's part).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.engine import Engine

from dps_common import logs, runtime_metrics
from dps_common.auth.cache import TtlCache
from dps_common.auth.introspection import IntrospectingAuthenticator
from dps_common.bootstrap_settings import IntrospectingServiceSettings, ServiceSettings
from dps_common.db import Transactions, make_engine

SettingsT = TypeVar("SettingsT", bound=ServiceSettings)


def start_process(read_settings: Callable[[], SettingsT], service: str, process: str) -> SettingsT:
    """A process's first step: its settings (``Settings.from_env``; a ``SettingsError`` names every
    problem), then its logs, at their LOG_LEVEL, naming the service and the process."""
    settings = read_settings()
    logs.configure(settings.log_level, service=service, process=process)
    runtime_metrics.install(service)  # dps_build_info on a worker's /metrics
    return settings


def make_transactions(settings: ServiceSettings, application_name: str) -> Transactions:
    """The process's transactions on DATABASE_URL; ``application_name`` names its connections (and its
    pool's metrics)."""
    return Transactions.for_engine(make_settings_engine(settings, application_name))


def make_settings_engine(settings: ServiceSettings, application_name: str) -> Engine:
    """The process's engine on DATABASE_URL with its pool's settings (DATABASE_POOL_SIZE,
    DATABASE_MAX_OVERFLOW); ``application_name`` names its connections in pg_stat_activity."""
    return make_engine(settings.database_url, pool_size=settings.db_pool_size, max_overflow=settings.db_max_overflow,
                       application_name=application_name)


def key_authenticator(settings: IntrospectingServiceSettings) -> IntrospectingAuthenticator:
    """API keys checked by the api (key introspection), behind this process's TTL cache."""
    return IntrospectingAuthenticator(
        settings.api_url,
        settings.internal_api_token,
        TtlCache(settings.key_cache_ttl_seconds),
        verify=settings.api_ca_file or True,
    )
