"""What ``make run`` reads from the environment: where it keeps its state, where each service listens,
and the servers to use instead of the embedded ones. Every problem is found before anything starts."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# variable -> (default port, what listens there)
PORTS = {
    "PORT": (8080, "the api"),
    "WEBHOOKS_PORT": (8081, "the webhook dispatcher"),
    "BILLING_PORT": (8082, "the billing connector"),
    "CONSOLE_PORT": (8083, "the settings console"),
    "BILLING_STAND_IN_PORT": (8090, "the billing platform stand-in"),
    "MAILBOX_PORT": (8025, "the development mailbox page"),
    "SMTP_PORT": (1025, "the development SMTP sink"),
}
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
    redis_url: str  # empty: each process limits rates on its own
    environ: dict[str, str]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "RunConfig":
        env = dict(os.environ if environ is None else environ)
        run_dir = Path(env.get("DPS_RUN_DIR") or ".run").resolve()
        host = env.get("HOST") or "127.0.0.1"  # a development server: this machine only unless HOST says otherwise
        problems: list[str] = []
        ports: dict[str, int] = {}
        for name, (default, what) in PORTS.items():
            raw = env.get(name) or str(default)
            if not (raw.isascii() and raw.isdigit() and 0 < int(raw) < 65536):
                problems.append(f"{name} must be a TCP port number, got {raw!r}")
            elif int(raw) in ports.values():
                problems.append(f"{name}={raw} is already the port of another service")
            else:
                ports[name] = int(raw)
                problem = _cannot_listen(host, int(raw))
                if problem:
                    problems.append(f"{what} cannot listen on {host}:{raw} ({problem}): stop the other server or set {name}")
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
        )

    @property
    def connect_host(self) -> str:
        """The address a client on this machine connects to (loopback when the servers listen on all)."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host

    def origin(self, port_name: str) -> str:
        """Where a browser or curl on this machine reaches the service."""
        host = self.connect_host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.ports[port_name]}"

    @property
    def console_url(self) -> str:
        """The console's public URL (CONSOLE_PUBLIC_URL; the connector's CONSOLE_URL)."""
        return self.origin("CONSOLE_PORT") + CONSOLE_PATH

    def base(self, port_name: str) -> str:
        return self.origin(port_name) + EXTERNAL


def _cannot_listen(host: str, port: int) -> str | None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None
