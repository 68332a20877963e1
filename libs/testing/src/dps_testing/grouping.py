"""Which tests share a pytest-xdist worker (``--dist loadgroup``): the contract suite builds one stack
(four services under gunicorn, RabbitMQ, relays, workers, an HTTPS receiver) per session, so all its
modules are one group and the stack is built once per run, not once per worker; every other test is
grouped by its module, so module-scoped fixtures (databases, servers) are still made once, as with
``--dist loadscope``."""

from __future__ import annotations

import pytest

# The levels whose tests all share one session-wide stack: one group each.
ONE_GROUP = frozenset({"contract"})


def group_of(item: pytest.Item, level: str) -> str:
    return level if level in ONE_GROUP else item.nodeid.split("::", 1)[0]


def mark_group(item: pytest.Item, level: str) -> None:
    """Gives ``item`` its ``xdist_group`` unless it names one itself."""
    if item.get_closest_marker("xdist_group") is None:
        item.add_marker(pytest.mark.xdist_group(group_of(item, level)))
