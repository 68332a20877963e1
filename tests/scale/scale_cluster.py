"""A RabbitMQ cluster of three private nodes on this machine, for the scale suite.

Each node is a ``dps_testing.broker.PrivateBroker`` (its own node name, AMQP and distribution ports,
data and log folders, no plugins: the machine's own broker, port 5672 and node rabbit@<host>, is
never touched), all three with one Erlang cookie (a shared home folder), joined with
``rabbitmqctl join_cluster``. ``url`` lists the three nodes (``;``), as a deployment's ``AMQP_URL``
does. ``kill(node)`` ends a node's whole process group with SIGKILL (the Erlang VM with it): a lost
machine, not a shutdown. Each VM runs one scheduler without busy waiting: three VMs share 2 cores
with the services."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

from dps_testing.broker import PrivateBroker

LIGHT_VM = "+S 1:1 +sbwt none +sbwtdcpu none +sbwtdio none"


class ClusterNode(PrivateBroker):
    def __init__(self, home: Path) -> None:
        self._home = home
        super().__init__()

    def _environment(self) -> dict[str, str]:
        env = super()._environment()
        env["HOME"] = str(self._home)  # the cluster's one Erlang cookie
        env["RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS"] += " " + LIGHT_VM
        return env

    @property
    def alive(self) -> bool:
        return self._server is not None and self._server.poll() is None

    def kill(self) -> None:
        """SIGKILL to the node's process group (its start script and the Erlang VM)."""
        assert self._server is not None and self.pid is not None
        os.killpg(self.pid, signal.SIGKILL)
        self._server.wait(timeout=30)


class RabbitCluster:
    def __init__(self, size: int = 3) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="dpstest-cluster-home-"))
        cookie = self.home / ".erlang.cookie"
        cookie.write_text(secrets.token_hex(16).upper())
        cookie.chmod(0o400)
        self.nodes = [ClusterNode(self.home) for _ in range(size)]

    @property
    def url(self) -> str:
        return ";".join(node.url for node in self.nodes)

    def start(self) -> RabbitCluster:
        """Start the nodes side by side, then join the others to the first."""
        failures: list[BaseException] = []

        def start(node: ClusterNode) -> None:
            try:
                node.start()
            except BaseException as exc:  # reported below, in this thread
                failures.append(exc)

        threads = [threading.Thread(target=start, args=(node,)) for node in self.nodes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise failures[0]
        first = self.nodes[0]
        for node in self.nodes[1:]:
            node.rabbitmqctl("-q", "stop_app")
            node.rabbitmqctl("-q", "join_cluster", first.node)
            node.rabbitmqctl("-q", "start_app")
            node.start()  # waits until it serves AMQP again
        # every node running in the cluster before any queue is declared: a quorum queue's members are
        # the nodes running at its declaration, and one declared on two of three nodes has no
        # majority left once its leader's node is lost
        first.rabbitmqctl("-q", "await_online_nodes", str(len(self.nodes)), "--timeout", "60")
        return self

    def members_of(self, queue: str, vhost: str = "/") -> int:
        """How many nodes hold a replica of a quorum queue."""
        for row in self.queues("name", "members", vhost=vhost):
            if row[0] == queue:
                return len(" ".join(row[1:]).strip("[]").split(","))
        raise LookupError(f"no queue {queue!r}")

    def running(self) -> list[ClusterNode]:
        return [node for node in self.nodes if node.alive]

    def node_named(self, name: str) -> ClusterNode:
        return next(node for node in self.nodes if node.node == name)

    def queues(self, *columns: str, vhost: str = "/") -> list[list[str]]:
        """``rabbitmqctl list_queues`` on a running node: one row of ``columns`` per queue."""
        listing = self.running()[0].rabbitmqctl("-q", "list_queues", "-p", vhost, "--no-table-headers", *columns)
        return [line.split() for line in listing.stdout.splitlines() if line.strip()]

    def leader_of(self, queue: str, vhost: str = "/") -> ClusterNode:
        """The node of a quorum queue's leader, or of a classic queue's process."""
        for row in self.queues("name", "pid", "leader", vhost=vhost):
            if row[0] == queue:  # a classic queue has no leader: the node in its pid, <node.n.n.n>
                return self.node_named(row[2] if len(row) == 3 else row[1].strip("<>").rsplit(".", 3)[0])
        raise LookupError(f"no queue {queue!r}")

    def close(self) -> None:
        try:
            for node in self.nodes:
                node.close()
        finally:
            shutil.rmtree(self.home, ignore_errors=True)


def vhost_of(url: str) -> str:
    return unquote(urlsplit(url.split(";")[0]).path[1:]) or "/"
