"""Every test's level (a pytest marker) from the folder it is in, so ``-m "unit or http"`` picks the
fast part of the suite (``make test-fast``) and a new test folder must be given a level.

- ``unit``: no I/O (the domain, pure helpers, pact consumers against the Pact mock server);
- ``http``: a service through ``falcon.testing`` in-process, on PostgreSQL and nothing else;
- ``integration``: real PostgreSQL, RabbitMQ, Redis, processes, gunicorn; ``tools/dev-run/tests``
  (``make run`` itself) and the billing platform stand-in's tests count as integration;
- ``browser``: Playwright and Chromium; ``contract``: ``tests/contract``, the running stack;
  ``deploy``: ``tests/deploy``, the deployment files; ``scale``: ``tests/scale``, a deployment's
  engines on this machine (a RabbitMQ cluster losing a node, a PostgreSQL failover: ``make test-scale``).

The levels are active where the rootdir's pytest.ini registers the ``unit`` marker (the repository's
does; a pytest run elsewhere with this venv is left alone).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

LEVELS = ("unit", "http", "integration", "browser", "contract", "deploy", "scale")

# A level's folder inside a ``tests`` folder: services/*/tests/<level>, libs/common/tests/<level>.
_LEVEL_FOLDERS = frozenset({"unit", "http", "integration", "browser"})

# Folders (relative to the rootdir) whose tests all have one level.
_WHOLE_FOLDERS = {
    PurePosixPath("tests/contract"): "contract",
    PurePosixPath("tests/deploy"): "deploy",
    PurePosixPath("tests/scale"): "scale",
    PurePosixPath("tools/dev-run/tests"): "integration",
    PurePosixPath("tests/stand-ins/billing-platform/tests"): "integration",
}


class UnknownLevel(Exception):
    pass


def level_of(path: Path, rootdir: Path) -> str:
    """The level of the test file at ``path``; ``UnknownLevel`` names the file when its folder has none."""
    relative = PurePosixPath(path.resolve().relative_to(rootdir.resolve()).as_posix())
    folder = relative.parent
    for ancestor in (folder, *folder.parents):
        if ancestor.name in _LEVEL_FOLDERS and ancestor.parent.name == "tests":
            return ancestor.name
        if ancestor in _WHOLE_FOLDERS:
            return _WHOLE_FOLDERS[ancestor]
    raise UnknownLevel(
        f"{relative}: its folder has no test level; put it in a tests/<level> folder ({', '.join(sorted(_LEVEL_FOLDERS))})"
        " or give the folder a level in dps_testing.levels"
    )
