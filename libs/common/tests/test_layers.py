"""The layers of libs/common: code that serves no HTTP imports no falcon, and ``auth`` never imports
``http`` (``http`` builds on ``auth``, not the other way round). Each check runs in a fresh
interpreter, so modules imported by other tests cannot hide an import."""

from __future__ import annotations

import subprocess
import sys

import pytest

NO_HTTP_MODULES = [
    "dps_common.auth.authenticator",
    "dps_common.auth.introspection",
    "dps_common.auth.revocations",
    "dps_common.crypto",
    "dps_common.db",
    "dps_common.events",
    "dps_common.json",
    "dps_common.keyset",
    "dps_common.logs",
    "dps_common.messaging",
    "dps_common.messaging.subscriber",
    "dps_common.migrations",
    "dps_common.outbox",
    "dps_common.outbox.migration",
    "dps_common.outbox.relay.cli",
    "dps_common.paging",
    "dps_common.process_server",
    "dps_common.settings",
]


def imported_by(module: str) -> set[str]:
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


@pytest.mark.parametrize("module", NO_HTTP_MODULES)
def test_a_module_for_processes_without_http_imports_no_falcon(module: str):
    assert "falcon" not in imported_by(module)


def test_auth_never_imports_http():
    modules = imported_by("dps_common.auth.authenticator, dps_common.auth.introspection, dps_common.auth.scopes")
    assert not {m for m in modules if m.startswith("dps_common.http")}
