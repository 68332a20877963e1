"""``make run``: secrets, databases, migrations, the demo seed, then every process until a stop; once
all answer, the banner (with a sign-in link the console mailed to the demo admin).

Order of the way out, however it is asked for (``signals``): the services (SIGTERM, newest first,
SIGKILL after a bound), then the embedded Redis, then the embedded PostgreSQL. Nothing is left running."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from dps_api.cli.seed import DemoSeed
from dps_api.cli.seed.data import USERS
from dps_api.settings import Settings as ApiSettings
from dps_dev.banner import ConsoleSignIn, banner
from dps_dev.config import RunConfig
from dps_dev.console_link import LinkUnavailable, demo_sign_in_link
from dps_dev.databases import Databases, databases
from dps_dev.demo_key import seed_with_demo_key
from dps_dev.redis_server import embedded_redis
from dps_dev.secrets_file import load_secrets, write_env_file
from dps_dev.signals import StopSignals
from dps_dev.supervisor import CrashLoop, Supervisor
from dps_dev.system import System, plan

ADMIN_ENV = "admin.env"  # what dealpricing-admin reads when DATABASE_URL is not set (dps_api.cli.settings)


def run(config: RunConfig, signals: StopSignals) -> int:
    config.run_dir.mkdir(parents=True, exist_ok=True)
    generated = load_secrets(config.run_dir / "secrets.env")
    with databases(config) as dbs, rate_limit_store(config) as config:
        print(f"PostgreSQL: {dbs.description}. Migrating...", flush=True)
        system = plan(config, dbs, generated)
        for migration in system.migrations():
            subprocess.run(migration.command, env=migration.env, check=True)
        print("Seeding the demo organization (idempotent)...", flush=True)
        demo = seed_with_demo_key(ApiSettings.from_env(system.api_env), config.run_dir)
        print(f"Demo objects: {demo.created} created, {demo.kept} already there.", flush=True)
        admin_env = config.run_dir / ADMIN_ENV
        write_env_file(
            admin_env,
            {"DATABASE_URL": dbs.api, "API_KEY_PEPPER": system.api_env["API_KEY_PEPPER"]},
            "# make run's api database and pepper, for dealpricing-admin; removed when make run stops\n",
        )
        try:
            return _serve(system, signals, lambda: _announce(config, demo, dbs))
        finally:
            admin_env.unlink(missing_ok=True)


@contextmanager
def rate_limit_store(config: RunConfig) -> Iterator[RunConfig]:
    """The config with its Redis: REDIS_URL's, else the runner's own for the block."""
    if config.redis_url:
        yield config
        return
    with embedded_redis(config.run_dir) as url:
        yield replace(config, redis_url=url, redis_embedded=True)


def _announce(config: RunConfig, demo: DemoSeed, dbs: Databases) -> None:
    """The banner, with a fresh sign-in link the console mailed to the demo admin."""
    email = USERS["admin"][0]
    try:
        sign_in = ConsoleSignIn(email, demo_sign_in_link(config, email))
    except LinkUnavailable as exc:
        sign_in = ConsoleSignIn(email, None, str(exc))
    print(banner(config, demo, dbs, sign_in), flush=True)


def _serve(system: System, signals: StopSignals, on_ready: Callable[[], None]) -> int:
    supervisor = Supervisor()
    try:
        for process in system.processes:
            for path, text in process.files:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            supervisor.start(process.name, process.command, process.env, process.ready_url)
        supervisor.wait_ready()
        on_ready()
        try:
            supervisor.watch()  # until a stop signal (StopRequested): a process that exits is started again
        except CrashLoop as loop:
            signals.begin_stop()
            print(f"make run: {loop}; stopping the rest.", file=sys.stderr, flush=True)
            return 1
        return 0
    finally:
        signals.begin_stop()
        print("Stopping the services...", flush=True)
        supervisor.stop_all()


