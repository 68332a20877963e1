"""The init containers' schema gate (deploy/k8s/base/scripts/wait_for_schema.py) on a real PostgreSQL:
it holds a pod while the database is behind the image, lets it start at the head or at a newer
revision it does not know (a rollback), and says why it waits."""

from __future__ import annotations

import subprocess
import sys

import psycopg
from deploy_helpers import K8S

from dps_testing.services import fresh_database

from dps_billing.db.migrate import upgrade

SCRIPT = K8S / "base" / "scripts" / "wait_for_schema.py"


def wait(database_url: str, timeout: float = 1.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "dps_billing", "--timeout", str(timeout), "--interval", "0.2"],
                          env={"DATABASE_URL": database_url, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=60)


def test_holds_a_pod_while_the_database_is_behind_then_lets_it_start():
    with fresh_database("dps_wait_schema") as url:
        behind = wait(url)
        assert behind.returncode == 1
        assert "no revision" in behind.stdout and "waiting for the migration Job" in behind.stdout
        upgrade(url)
        ready = wait(url)
        assert ready.returncode == 0, ready.stderr
        assert "ready" in ready.stdout


def test_a_newer_schema_than_the_image_knows_lets_an_old_pod_start():
    with fresh_database("dps_wait_schema") as url:
        upgrade(url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE alembic_version SET version_num = 'a_later_release'")
        assert wait(url).returncode == 0


def test_an_unreachable_database_is_waited_for_and_named():
    result = wait("postgresql://nobody@127.0.0.1:9/none", timeout=0.5)
    assert result.returncode == 1
    assert "database not reachable" in result.stdout
