"""``DPS_REPLICAS=2 make run``: two of every service process, as a deployment runs two pods of each.

- Each HTTP server (api, dispatcher, connector, console) runs twice, replica ``r`` on ``<NAME>_PORT_<r>``
  (defaults: the service's port + 100 x r, on loopback). The one address balances every route between
  the two (round robin; a replica that cannot be reached is skipped and tried again later).
- The service's own port (``API_PORT``, ...) becomes its Service address: the proxy listens there too
  and balances every path between the two replicas, so what the services call among themselves (key
  introspection, quote snapshots, the console's calls) survives the loss of either, as a Kubernetes
  Service does.
- Every relay and worker runs twice (``DPS_REPLICA`` tells them apart in ``ps``); the metrics ports
  asked for (``*_METRICS_PORT``) go to the first replica only, as two cannot bind one port.
- The stand-in, the mailbox and the proxy stay single."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from dps_dev.config import BEHIND_PROXY, INTERNAL_HOST, METRICS_PORTS, RunConfig

if TYPE_CHECKING:  # (system imports this module)
    from dps_dev.system import Process

SINGLE = ("billing platform stand-in", "development mailbox", "proxy")
# what each relay and worker reads its metrics port from (config.METRICS_PORTS is per process of make run)
METRICS_VARIABLES = ("RELAY_METRICS_PORT", *METRICS_PORTS)


def replicated(config: RunConfig, processes: list[Process]) -> list[Process]:
    """``processes`` with every service process ``config.replicas`` times (unchanged for one)."""
    if config.replicas == 1:
        return processes
    http = {str(config.ports[name]): name for name in BEHIND_PROXY}
    out: list[Process] = []
    for process in processes:
        if process.name in SINGLE:
            out.append(process)
            continue
        port_name = http.get(process.env.get("PORT", "")) if process.ready_url else None
        for replica in range(1, config.replicas + 1):
            env = {**process.env, "DPS_REPLICA": str(replica)}
            name, ready_url = f"{process.name} {replica}", process.ready_url
            if port_name:  # its own port; the service's is the proxy's Service address
                port = config.ports[f"{port_name}_{replica}"]
                env["PORT"] = str(port)
                ready_url = f"http://{INTERNAL_HOST}:{port}/readyz"
            elif replica > 1:
                env = {key: value for key, value in env.items() if key not in METRICS_VARIABLES}
            out.append(replace(process, name=name, env=env, ready_url=ready_url))
    return out
