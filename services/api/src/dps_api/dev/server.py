"""``make run`` (``dealpricing-dev``): the whole system in the foreground until Ctrl-C.

Secrets are generated once into ``.run/secrets.env``. PostgreSQL is DATABASE_URL's server or an
embedded one; the broker is AMQP_URL's or kombu's file-system transport in ``.run/broker``. Then:
migrate both services' databases, seed the demo organization, issue a fresh admin key (shown once),
and run the api (PORT, 8080), its outbox relay, the dispatcher's HTTP side (WEBHOOKS_PORT, 8081) and
its worker, stopping them all, and the embedded PostgreSQL, on the way out.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from sqlalchemy.exc import OperationalError

from dps_common.settings import SettingsError

from dps_api.db.migrate import upgrade
from dps_api.dev.database import Database, database, sibling_database
from dps_api.dev.processes import Supervisor
from dps_api.dev.secrets_file import load_secrets
from dps_api.seed import DemoSeed, SeedError, seed_and_issue_admin_key
from dps_api.settings import Settings

BIN = Path(sys.executable).parent
GUNICORN = [sys.executable, "-m", "gunicorn", "-c", "python:dps_common.gunicorn_conf"]


def main() -> int:
    try:
        return run()
    except (SettingsError, SeedError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except OperationalError as error:
        print(f"error: cannot reach the database: {error.orig or error}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as error:
        print(f"error: {' '.join(error.cmd)} failed with {error.returncode}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C before the servers started; the database is already stopped
        return 130


def run() -> int:
    run_dir = Path(os.environ.get("DPS_RUN_DIR", ".run")).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {**load_secrets(run_dir / "secrets.env"), **os.environ}  # the environment wins
    env.setdefault("HOST", "127.0.0.1")  # a dev server: this machine only unless HOST says otherwise
    env.setdefault("PORT", "8080")
    env.setdefault("WEBHOOKS_PORT", "8081")
    env.setdefault("AMQP_URL", f"filesystem://{run_dir / 'broker'}")
    for port in (env["PORT"], env["WEBHOOKS_PORT"]):
        problem = _port_problem(env["HOST"], port)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 1
    with database(run_dir, env) as db:
        api_env = {**env, "DATABASE_URL": db.url}
        settings = Settings.from_env(api_env)
        print(f"PostgreSQL: {db.description}. Migrating...", flush=True)
        upgrade(db.url)
        webhooks_env = {
            **env,
            "DATABASE_URL": env.get("WEBHOOKS_DATABASE_URL") or sibling_database(db.url, "dps_webhooks"),
            "PORT": env["WEBHOOKS_PORT"],
            "API_URL": _base(env, env["PORT"]),
        }
        subprocess.run([str(BIN / "dealpricing-webhooks"), "migrate"], env=webhooks_env, check=True)
        print("Seeding the demo organization (idempotent)...", flush=True)
        demo = seed_and_issue_admin_key(settings)
        print(f"Demo objects: {demo.created} created, {demo.kept} already there.", flush=True)
        return serve(api_env, webhooks_env, lambda: print(banner(env, demo, db, run_dir), flush=True))


def serve(api_env: dict[str, str], webhooks_env: dict[str, str], on_ready: Callable[[], None]) -> int:
    supervisor = Supervisor()
    try:
        api = supervisor.start("api", [*GUNICORN, "dps_api.wsgi:create()"], api_env)
        supervisor.start("outbox relay", [str(BIN / "dealpricing-outbox-relay")], api_env)
        webhooks = supervisor.start("webhook dispatcher", [*GUNICORN, "dps_webhooks.wsgi:create()"], webhooks_env)
        supervisor.start("webhook worker", [str(BIN / "dealpricing-webhooks"), "worker"], webhooks_env)
        if supervisor.wait_ready(api, _base(api_env, api_env["PORT"])) and supervisor.wait_ready(
            webhooks, _base(webhooks_env, webhooks_env["PORT"])
        ):
            on_ready()
        exited = supervisor.wait_any()
        print(f"{exited.name} exited with {exited.process.returncode}; stopping the rest.", file=sys.stderr)
        return exited.process.returncode or 1
    except KeyboardInterrupt:  # every child got the same SIGINT and is shutting down
        return 0
    finally:
        supervisor.stop_all()


def _port_problem(host: str, port_text: str) -> str | None:
    """Why a server could not listen there, found before the database is started."""
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        return f"ports must be TCP port numbers, got {port_text!r}"
    port = int(port_text)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return f"cannot listen on {host}:{port} ({exc.strerror}); stop the other server or set PORT / WEBHOOKS_PORT"
    return None


def _base(env: dict[str, str], port: str) -> str:
    host = "127.0.0.1" if env["HOST"] in ("0.0.0.0", "") else env["HOST"]
    return f"http://{host}:{port}"


def banner(env: dict[str, str], demo: DemoSeed, db: Database, run_dir: Path) -> str:
    api = f"{_base(env, env['PORT'])}/external/v1"
    hooks = f"{_base(env, env['WEBHOOKS_PORT'])}/external/v1"
    key = demo.admin_key
    return f"""
================================================================================
 Deal Pricing Service is up: {api}
   OpenAPI document   {api}/openapi.json
   Webhooks           {hooks}/webhook-configs  (OpenAPI: {hooks}/openapi.json)
                      (in a deployment one ingress serves both under one address)
   Organization       {demo.organization_name} ({demo.organization_id})
   Admin API key      {key}
                      (shown once; a new key is issued on every start, earlier keys keep working)
 Try:
   export DPS_KEY='{key}'
   curl -s -H "x-api-key: $DPS_KEY" {api}/whoami
   curl -s -H "x-api-key: $DPS_KEY" '{api}/products?limit=5'
   curl -s -H "x-api-key: $DPS_KEY" '{api}/approvals?status=PENDING'
   curl -s -H "x-api-key: $DPS_KEY" -H 'content-type: application/json' \\
     -d '{{"url": "https://your-receiver.example/hooks"}}' {hooks}/webhook-configs
 Events go through {env["AMQP_URL"]}.
 Admin command line (keys, users):
   env $(grep -v '^#' {run_dir}/secrets.env | xargs) DATABASE_URL='{db.url}' \\
     .venv/bin/dealpricing-admin keys list --org {demo.organization_id}
 Ctrl-C stops everything{" and the embedded PostgreSQL" if db.embedded else ""}.
================================================================================
"""


if __name__ == "__main__":
    sys.exit(main())
