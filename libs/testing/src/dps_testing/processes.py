"""Real server processes for the black-box suites: gunicorn over HTTPS with a throwaway CA, and the
health and metrics endpoints of the processes that serve no other HTTP."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
import trustme
from prometheus_client.parser import text_string_to_metric_families

READY_DEADLINE_SECONDS = 60


def write_tls_files(folder: Path) -> dict[str, str]:
    """A throwaway CA and a certificate for 127.0.0.1 and localhost: ``ca``, ``cert``, ``key`` paths."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    files = {"ca": folder / "ca.pem", "cert": folder / "server.pem", "key": folder / "server.key"}
    ca.cert_pem.write_to_path(str(files["ca"]))
    cert.private_key_pem.write_to_path(str(files["key"]))
    for i, pem in enumerate(cert.cert_chain_pems):
        pem.write_to_path(str(files["cert"]), append=i > 0)
    return {name: str(path) for name, path in files.items()}


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now and that this process has not given out
    before, for a server that binds it later.

    Drawn outside the kernel's ephemeral range (below it, unless it starts low), not from it (port
    0): between this pick and the server's bind, any outgoing connection on the machine may take an
    ephemeral port (with four test workers, a ``make run`` test lost its dispatcher's port that
    way). Outside the range only another listener can. Drawn from the system's randomness, not the
    ``random`` module's state, which tests and Hypothesis may seed. Each pytest-xdist worker draws
    from its own share of the range: a port one worker gave out and another drew before the first's
    server bound it was taken twice (the scale suite's runner found its connector's port in use)."""
    low, high = _ephemeral_ports()
    picks = _worker_share(range(_LOWEST_PICKED, low) if low - _LOWEST_PICKED >= 1000 else range(high + 1, 65536))
    while True:
        port = _RANDOM.choice(picks)
        if port in _GIVEN:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _GIVEN.add(port)
        return port


_LOWEST_PICKED = 10000  # above the well-known and most registered servers' ports
_RANDOM = random.SystemRandom()
_GIVEN: set[int] = set()  # a few hundred a run, of some 20,000


def _worker_share(picks: range) -> range:
    """This test worker's ports of ``picks``: every n-th, from its index (gw0, gw1, ...) among n workers."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or count <= 1:
        return picks
    return range(picks.start + int(worker.removeprefix("gw")), picks.stop, count)


def _ephemeral_ports() -> tuple[int, int]:
    """The kernel's range for outgoing connections (Linux; its default elsewhere)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def bound_listener() -> socket.socket:
    """A socket bound to a free port on 127.0.0.1, for ``gunicorn(listener=...)``; its origin is
    ``https://127.0.0.1:{listener.getsockname()[1]}``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    return listener


def stop(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout``."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


@contextmanager
def gunicorn(
    app: str, env: dict[str, str], tls: dict[str, str], log_path: Path, *, workers: int = 2, extra: Sequence[str] = (),
    listener: socket.socket | None = None,
) -> Iterator[str]:
    """``app`` (``module:factory()``) under gunicorn with the production settings, over TLS; yields
    its origin ``https://127.0.0.1:<port>`` once ``/readyz`` answers 200.

    gunicorn listens on a socket bound here and handed over (``fd://``): no other process, another
    xdist worker's server say, can take the port between its choice and the bind. Pass ``listener``
    (from ``bound_listener()``) when the app's environment must name its own origin first."""
    listener = listener or bound_listener()
    port: int = listener.getsockname()[1]
    command = [
        sys.executable, "-m", "gunicorn", app,
        "--config", "python:dps_common.gunicorn_conf",  # the production settings (the edge worker, keep-alive)
        "--bind", f"fd://{listener.fileno()}",
        "--workers", str(workers),
        "--certfile", tls["cert"],
        "--keyfile", tls["key"],
        "--graceful-timeout", "5",
        *extra,
    ]
    with open(log_path, "wb") as log, listener:
        process = subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, pass_fds=(listener.fileno(),)
        )
    origin = f"https://127.0.0.1:{port}"
    try:
        wait_ready(process, origin + "/readyz", tls["ca"], log_path)
        yield origin
    finally:
        stop(process)


def wait_ready(process: subprocess.Popen[bytes], url: str, ca_file: str, log_path: Path) -> None:
    """Until ``url`` (HTTPS, the test CA) answers 200; the process's log tail if it never does."""
    _wait_for_200(process, url, lambda session: session.get(url, verify=ca_file, timeout=2), log_path)


def wait_healthy(process: subprocess.Popen[bytes], origin: str, path: str = "/healthz") -> None:
    """Until ``origin + path`` (plain HTTP; ``/healthz`` of ``dps_common.process_server``) answers 200."""
    url = origin + path
    _wait_for_200(process, url, lambda session: session.get(url, timeout=2))


def _wait_for_200(
    process: subprocess.Popen[bytes],
    url: str,
    get: Callable[[requests.Session], requests.Response],
    log_path: Path | None = None,
) -> None:
    deadline = time.monotonic() + READY_DEADLINE_SECONDS
    last_error = "no answer yet"
    probe = _plain()

    def log_tail() -> str:
        return ":\n" + log_path.read_text()[-4000:] if log_path else ""

    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{url}: process exited with {process.returncode}{log_tail()}", pytrace=False)
        try:
            resp = get(probe)
            if resp.status_code == 200:
                return
            last_error = f"answered {resp.status_code}: {resp.text[:200]}"
        except requests.RequestException as exc:
            last_error = str(exc)
        time.sleep(0.2)
    pytest.fail(f"{url} not ready after {READY_DEADLINE_SECONDS}s ({last_error}){log_tail()}", pytrace=False)


def scrape(origin: str) -> dict[str, float]:
    """``origin/metrics`` as samples keyed as written: ``name{label="value",...}`` (labels sorted)."""
    resp = _plain().get(origin + "/metrics", timeout=5)
    resp.raise_for_status()
    samples: dict[str, float] = {}
    for family in text_string_to_metric_families(resp.text):
        for sample in family.samples:
            labels = ",".join(f'{name}="{value}"' for name, value in sorted(sample.labels.items()))
            samples[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return samples


def _plain() -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # no proxy in the way of 127.0.0.1
    return session
