"""Fixtures the integration modules share, each once per module: a module says where its committed
database is with its own ``settings_for`` (a migrated database of its own, ``webhook_helpers``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from dps_testing.webhook_receiver import Receiver

from dps_webhooks.settings import Settings

from webhook_helpers import Store


@pytest.fixture(scope="module")
def store(settings_for: Callable[..., Settings]) -> Iterator[Store]:
    """Committed rows on the module's database, made and read as the tests need them."""
    store = Store(settings_for())
    yield store
    store.close()


@pytest.fixture(scope="module")
def receiver(tls_files: dict[str, str]) -> Iterator[Receiver]:
    """A real HTTPS receiver (the suite's test CA) that verifies each request's signature."""
    with Receiver(tls_files) as receiver:
        yield receiver
