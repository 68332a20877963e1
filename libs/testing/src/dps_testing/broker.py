"""RabbitMQ in tests: a private node for tests that stop the broker, and ``rabbitmqctl`` to inspect
the machine's broker or a private node.

A test that stops or restarts a broker runs it on ``private_broker()``: a RabbitMQ node of its own
(its own node name, ports, data and log folders, no plugins), so the machine's shared broker, which
other test runs and people use at the same time, is never touched. ``queue_counts`` and
``rabbitmqctl`` take ``broker=`` to address a private node instead of the shared one."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from kombu.connection import Connection

from dps_common.json import dumps
from dps_common.messaging.publisher import EventPublisher, OutgoingEvent
from dps_testing.availability import unavailable
from dps_testing.processes import free_port

RABBITMQCTL_TIMEOUT_SECONDS = 120
START_TIMEOUT_SECONDS = 120
STOP_TIMEOUT_SECONDS = 60


def publish_one(publisher: EventPublisher, envelope: dict[str, Any]) -> None:
    """Publish one event envelope, as a service's relay would, and wait for the broker's confirm
    (raises ``PublishFailed``). Services publish only through their outbox relay, in batches."""
    failure = publisher.publish_batch([OutgoingEvent(str(envelope["id"]), str(envelope["type"]), dumps(envelope))]).failure
    if failure is not None:
        raise failure


def rabbitmqctl(*args: str, check: bool = True, broker: PrivateBroker | None = None) -> subprocess.CompletedProcess[str]:
    """``rabbitmqctl`` against the machine's broker, or against ``broker`` (``-n`` its node)."""
    if broker is not None:
        return broker.rabbitmqctl(*args, check=check)
    rabbitmqctl = shutil.which("rabbitmqctl")
    if rabbitmqctl is None:
        raise RuntimeError("rabbitmqctl is needed to inspect the test broker")
    return subprocess.run(
        [rabbitmqctl, *args], check=check, capture_output=True, text=True, timeout=RABBITMQCTL_TIMEOUT_SECONDS
    )


def queue_counts(amqp_url: str, queue: str, broker: PrivateBroker | None = None) -> tuple[int, int]:
    """(ready, unacknowledged) messages of ``queue`` on the URL's virtual host (of ``broker`` when given)."""
    vhost = unquote(urlsplit(amqp_url).path[1:]) or "/"
    columns = ("name", "messages_ready", "messages_unacknowledged")
    listing = rabbitmqctl("-q", "list_queues", "-p", vhost, "--no-table-headers", *columns, broker=broker).stdout
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] == queue:
            return int(fields[1]), int(fields[2])
    raise LookupError(f"no queue {queue!r} on virtual host {vhost!r}")


def _rabbitmq_command(name: str) -> str:
    """The RabbitMQ script itself. Debian's ``/usr/sbin`` entries are a wrapper that runs every
    command as the ``rabbitmq`` user, with that user's home and Erlang cookie; a private node runs
    as the test's user, with a cookie in its own folder, so it calls the script beside the wrapper."""
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} is not installed")
    real = Path(os.path.realpath(found))
    beside = real.parent / name
    return str(beside if beside.is_file() else real)


class PrivateBroker:
    """A RabbitMQ node of the test's own on 127.0.0.1, its files in a temporary folder.

    ``start()`` returns once it serves AMQP at ``url`` (guest/guest, the default virtual host);
    ``stopped()`` stops its application for a block, ``restart()`` stops and starts it, and
    ``close()`` stops the node and removes its files."""

    def __init__(self) -> None:
        self.node = f"dpstest-{secrets.token_hex(4)}@localhost"
        self.port = free_port()
        self.url = f"amqp://guest:guest@127.0.0.1:{self.port}//"
        self.folder = Path(tempfile.mkdtemp(prefix="dpstest-rabbitmq-"))  # removed by close()
        self._server: subprocess.Popen[bytes] | None = None
        self._env = self._environment()

    def _environment(self) -> dict[str, str]:
        folder = self.folder
        (folder / "home").mkdir()
        (folder / "enabled_plugins").write_text("[].\n")  # none: management would clash on port 15672
        (folder / "rabbitmq-env.conf").write_text("")  # not the machine's, which names the shared node
        (folder / "rabbitmq.conf").write_text(f"listeners.tcp.1 = 127.0.0.1:{self.port}\n")
        env = {
            **os.environ,
            "HOME": str(folder / "home"),  # the node's Erlang cookie, shared with the rabbitmqctl calls below
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(free_port()),
            "RABBITMQ_MNESIA_BASE": str(folder / "mnesia"),
            "RABBITMQ_LOG_BASE": str(folder / "log"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(folder / "enabled_plugins"),
            "RABBITMQ_CONF_ENV_FILE": str(folder / "rabbitmq-env.conf"),
            "RABBITMQ_CONFIG_FILE": str(folder / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(folder / "advanced.config"),  # absent: none
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1}",
            "ERL_EPMD_ADDRESS": "127.0.0.1",
        }
        for inherited in ("RABBITMQ_CONFIG_FILES", "RABBITMQ_PLUGINS_DIR", "RABBITMQ_LOGS", "ERL_FLAGS"):
            env.pop(inherited, None)
        return env

    @property
    def pid(self) -> int | None:
        """The node's start script (the leader of the node's process group), while started."""
        return None if self._server is None else self._server.pid

    def start(self) -> PrivateBroker:
        """Start the node (again, on the same data, when it has exited) and wait until it serves."""
        if self._server is None or self._server.poll() is not None:
            with open(self.folder / "server.out", "ab") as output:
                self._server = subprocess.Popen(
                    [_rabbitmq_command("rabbitmq-server")],
                    env=self._env,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: close() ends the VM and its helpers
                )
        self._wait_serving()
        return self

    def rabbitmqctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [_rabbitmq_command("rabbitmqctl"), "-n", self.node, *args],
            env=self._env,
            check=check,
            capture_output=True,
            text=True,
            timeout=RABBITMQCTL_TIMEOUT_SECONDS,
        )

    def queue_counts(self, queue: str) -> tuple[int, int]:
        """(ready, unacknowledged) messages of ``queue`` on the node's default virtual host."""
        return queue_counts(self.url, queue, broker=self)

    @contextmanager
    def stopped(self) -> Iterator[None]:
        """The broker application stopped (connections dropped, nothing accepted) for the block,
        started again afterwards whatever happened in it."""
        self.rabbitmqctl("-q", "stop_app")
        try:
            yield
        finally:
            self._start_app()

    def restart(self) -> None:
        with self.stopped():
            pass

    def close(self) -> None:
        """Stop the node (the script stops it gracefully on SIGTERM, else it is killed) and remove
        its files, whatever happens."""
        server, self._server = self._server, None
        try:
            if server is not None:
                if server.poll() is None:
                    server.terminate()
                    try:
                        server.wait(timeout=STOP_TIMEOUT_SECONDS)
                    except subprocess.TimeoutExpired:
                        pass
                try:  # the group the node was started in: the VM and its helpers, if any are left
                    os.killpg(server.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                server.wait(timeout=STOP_TIMEOUT_SECONDS)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _start_app(self) -> None:
        if self._server is None or self._server.poll() is not None:
            self.start()  # the node itself went away: start it again on its data
            return
        self.rabbitmqctl("-q", "start_app")  # a no-op when it runs
        self._wait_serving()

    def _wait_serving(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            if self._server is None or self._server.poll() is not None:
                raise RuntimeError(f"RabbitMQ node {self.node} exited: {self._output_tail()}")
            try:
                with Connection(self.url, connect_timeout=2) as connection:
                    connection.ensure_connection(max_retries=1)
                return
            except Exception as exc:  # kombu raises the transport's own errors
                if time.monotonic() > deadline:
                    raise RuntimeError(f"RabbitMQ node {self.node} not serving in {START_TIMEOUT_SECONDS} s") from exc
                time.sleep(0.5)

    def _output_tail(self) -> str:
        try:
            return (self.folder / "server.out").read_text(errors="replace")[-2000:]
        except OSError:
            return "(no output)"


@contextmanager
def private_broker() -> Iterator[PrivateBroker]:
    """A started private RabbitMQ node for the block, closed afterwards. Skips where RabbitMQ is not
    installed (a failure with ``CI=true``)."""
    try:
        _rabbitmq_command("rabbitmq-server")
        _rabbitmq_command("rabbitmqctl")
    except FileNotFoundError as exc:
        unavailable(f"a private RabbitMQ node needs the RabbitMQ server installed ({exc})")
    broker = PrivateBroker()
    try:
        yield broker.start()
    finally:
        broker.close()

