"""What ``make run`` reads from the environment: where it keeps its state, where each service listens,
and the servers to use instead of the embedded ones. Every problem is found before anything starts.

One address, as in a deployment: the proxy (``dps_dev.proxy``) listens on HOST:PORT and routes the
whole API and the console by path, as the ingress does; the services listen behind it, on loopback."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

# variable -> (default port, what listens there)
PORTS = {
    "PORT": (8080, "the proxy (the one address of the API and the console)"),
    "API_PORT": (8084, "the api"),
    "WEBHOOKS_PORT": (8081, "the webhook dispatcher"),
    "BILLING_PORT": (8082, "the billing connector"),
    "CONSOLE_PORT": (8083, "the settings console"),
    "BILLING_STAND_IN_PORT": (8090, "the billing platform stand-in"),
    "MAILBOX_PORT": (8025, "the development mailbox page"),
    "SMTP_PORT": (1025, "the development SMTP sink"),
}
# the metrics servers (/healthz, /metrics) of the processes that have one: a variable per process (two
# relays reading one RELAY_METRICS_PORT would take the same port); unset: none served
METRICS_PORTS = {
    "RELAY_METRICS_PORT": "the api's outbox relay",
    "BILLING_RELAY_METRICS_PORT": "the billing connector's outbox relay",
    "WEBHOOK_WORKER_METRICS_PORT": "the webhook worker",
    "BILLING_WORKER_METRICS_PORT": "the billing worker",
}
# a real billing platform (a Stripe test-mode app): its three settings, all or none
BILLING_APP = ("BILLING_CLIENT_ID", "BILLING_SECRET_KEY", "BILLING_WEBHOOK_SECRET")
# its addresses: each one set is used (unset: the connector's defaults, Stripe's own)
BILLING_URLS = ("BILLING_API_URL", "BILLING_MARKETPLACE_URL", "BILLING_DASHBOARD_URL", "BILLING_REDIRECT_URI",
                "BILLING_RETURN_URL")
# the services behind the proxy: on loopback whatever HOST is (reached through the proxy only, as the
# pods behind an ingress), so the X-Forwarded-For the proxy sets can be trusted
BEHIND_PROXY = ("API_PORT", "WEBHOOKS_PORT", "BILLING_PORT", "CONSOLE_PORT")
INTERNAL_HOST = "127.0.0.1"
# DPS_REPLICAS: how many of each service process (dps_dev.replicas); replica r of a service listens on
# <its port's variable>_<r>, by default its port + REPLICA_PORT_STEP x r
MAX_REPLICAS = 2
REPLICA_PORT_STEP = 100
EXTERNAL = "/external/v1"
CONSOLE_PATH = "/console"


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class RunConfig:
    run_dir: Path
    host: str  # where the servers listen (127.0.0.1: this machine only)
    ports: dict[str, int]
    database_url: str  # empty: the embedded PostgreSQL
    webhooks_database_url: str  # empty: a dps_webhooks database beside the api's
    billing_database_url: str  # empty: a dps_billing database beside the api's
    console_database_url: str  # empty: a dps_console database beside the api's
    amqp_url: str  # kombu's file-system transport in .run/broker unless AMQP_URL is set
    redis_url: str  # REDIS_URL; empty until the runner starts its own (dps_dev.redis_server)
    environ: dict[str, str]
    # the billing platform: True when the environment gives a real app's settings (BILLING_APP), which
    # are used with its URLs (BILLING_URLS) and no stand-in is started; False: the stand-in
    real_billing_platform: bool = False
    metrics_ports: dict[str, int] = field(default_factory=dict)  # those of METRICS_PORTS that are set
    redis_embedded: bool = False  # redis_url is the runner's own Redis
    replicas: int = 1  # DPS_REPLICAS: of each service process (dps_dev.replicas)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "RunConfig":
        env = dict(os.environ if environ is None else environ)
        run_dir = Path(env.get("DPS_RUN_DIR") or ".run").resolve()
        host = env.get("HOST") or "127.0.0.1"  # a development server: this machine only unless HOST says otherwise
        problems: list[str] = []
        ports: dict[str, int] = {}
        app = [name for name in BILLING_APP if env.get(name)]
        real_billing = bool(app)
        if real_billing and len(app) < len(BILLING_APP):
            missing = ", ".join(name for name in BILLING_APP if name not in app)
            problems.append(f"a real billing platform needs {', '.join(BILLING_APP)}: {missing} not set "
                            "(set none of them for the stand-in)")
        wanted = {name: (default, what) for name, (default, what) in PORTS.items()
                  if not (real_billing and name == "BILLING_STAND_IN_PORT")}
        replicas_text = env.get("DPS_REPLICAS") or "1"
        replicas = int(replicas_text) if replicas_text in [str(n) for n in range(1, MAX_REPLICAS + 1)] else 0
        if not replicas:
            problems.append(f"DPS_REPLICAS must be 1 to {MAX_REPLICAS}, got {replicas_text!r}")
        if replicas > 1:
            wanted.update({f"{name}_{r}": (PORTS[name][0] + REPLICA_PORT_STEP * r, f"{PORTS[name][1]}, replica {r}")
                           for name in BEHIND_PROXY for r in range(1, replicas + 1)})
        metrics = {name: (0, what) for name, what in METRICS_PORTS.items() if env.get(name)}
        for name, (default, what) in {**wanted, **metrics}.items():
            raw = env.get(name) or str(default)
            if not (raw.isascii() and raw.isdigit() and 0 < int(raw) < 65536):
                problems.append(f"{name} must be a TCP port number, got {raw!r}")
            elif int(raw) in ports.values():
                problems.append(f"{name}={raw} is already the port of another service")
            else:
                ports[name] = int(raw)
                where = INTERNAL_HOST if name.startswith(BEHIND_PROXY) else host
                problem = _cannot_listen(where, int(raw))
                if problem:
                    problems.append(f"{what} cannot listen on {where}:{raw} ({problem}): stop the other server or set {name}")
        if problems:
            raise ConfigError("; ".join(problems))
        return cls(
            run_dir=run_dir,
            host=host,
            ports=ports,
            database_url=env.get("DATABASE_URL", ""),
            webhooks_database_url=env.get("WEBHOOKS_DATABASE_URL", ""),
            billing_database_url=env.get("BILLING_DATABASE_URL", ""),
            console_database_url=env.get("CONSOLE_DATABASE_URL", ""),
            amqp_url=env.get("AMQP_URL") or f"filesystem://{run_dir / 'broker'}",
            redis_url=env.get("REDIS_URL", ""),
            environ=env,
            real_billing_platform=real_billing,
            metrics_ports={name: ports.pop(name) for name in metrics},
            replicas=replicas,
        )

    def upstreams(self, port_name: str) -> list[str]:
        """Where the proxy sends a service's requests (host:port): its replicas, or the service itself."""
        if self.replicas == 1:
            return [self.dial(port_name)]
        return [self.dial(f"{port_name}_{r}") for r in range(1, self.replicas + 1)]

    @property
    def connect_host(self) -> str:
        """The address a client on this machine connects to (loopback when the servers listen on all)."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host

    def origin(self, port_name: str) -> str:
        """Where a browser or curl on this machine reaches what listens on HOST (the proxy, the
        stand-in, the mailbox)."""
        host = self.connect_host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.ports[port_name]}"

    @property
    def public_origin(self) -> str:
        """The one address: the proxy, in front of every service."""
        return self.origin("PORT")

    @property
    def public_api_url(self) -> str:
        """The whole API's base (``{base_url}``), through the proxy; the api's PUBLIC_API_URL."""
        return self.public_origin + EXTERNAL

    @property
    def console_url(self) -> str:
        """The console's public URL (CONSOLE_PUBLIC_URL; the connector's CONSOLE_URL)."""
        return self.public_origin + CONSOLE_PATH

    @property
    def listen(self) -> str:
        """The proxy's listen address (host:port)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.ports['PORT']}"

    def internal(self, port_name: str) -> str:
        """A service behind the proxy, reached directly (the services among themselves, the runner)."""
        return f"http://{INTERNAL_HOST}:{self.ports[port_name]}"

    def dial(self, port_name: str) -> str:
        """The proxy's upstream address (host:port) of a service behind it."""
        return f"{INTERNAL_HOST}:{self.ports[port_name]}"


def _cannot_listen(host: str, port: int) -> str | None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None
