"""Which tests share a pytest-xdist worker (``--dist loadgroup``). A session-scoped stack is built
once per worker that needs it, so the folders whose modules share one are a group each, run on one
worker and built once per run: the contract suite's (four services under gunicorn, RabbitMQ, relays,
workers, an HTTPS receiver), and the console's browser and integration suites' (a real api
under gunicorn on a migrated database, organizations made by its admin command line, an SMTP server). Every other
test is grouped by its module, so module-scoped fixtures (databases, servers) are still made once,
as with ``--dist loadscope``."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

# Folders (relative to the rootdir) whose modules share a session-scoped stack, with their group.
SHARED_STACKS = {
    PurePosixPath("tests/contract"): "contract",
    PurePosixPath("tests/scale"): "scale",  # one worker: each scenario loads the whole machine
    PurePosixPath("services/console/tests/browser"): "console-api",
    PurePosixPath("services/console/tests/integration"): "console-api",
}


def group_of(item: pytest.Item) -> str:
    module = item.nodeid.split("::", 1)[0]
    folder = PurePosixPath(module).parent
    for shared, group in SHARED_STACKS.items():
        if folder == shared or shared in folder.parents:
            return group
    return module


def mark_group(item: pytest.Item) -> None:
    """Gives ``item`` its ``xdist_group`` unless it names one itself."""
    if item.get_closest_marker("xdist_group") is None:
        item.add_marker(pytest.mark.xdist_group(group_of(item)))
