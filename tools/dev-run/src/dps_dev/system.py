"""What ``make run`` starts, and with what: each service's command and environment, wired to the
others on this machine. The services are started by their console scripts, never imported; the
billing platform stand-in (a test double of Stripe) is started by its own, as a separate process,
and so is the development mailbox (``dealpricing-dev mailbox``: the SMTP sink the console mails to).
Last, the proxy (Caddy, ``dps_dev.proxy``): the one address of the API and the console, routed by path
as the ingress routes it; the services listen behind it on loopback and call each other directly."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dps_dev import proxy
from dps_dev.config import BEHIND_PROXY, BILLING_URLS, EXTERNAL, INTERNAL_HOST, METRICS_PORTS, RunConfig
from dps_dev.databases import Databases
from dps_dev.replicas import replicated

BIN = Path(sys.executable).parent
GUNICORN = [sys.executable, "-m", "gunicorn", "-c", "python:dps_common.gunicorn_conf"]

# each service gets its own secrets only (the environment's value, else the generated one)
API_SECRETS = ("API_KEY_PEPPER", "CURSOR_SECRET", "INTERNAL_API_TOKEN", "CONSOLE_API_TOKEN")
WEBHOOKS_SECRETS = ("CURSOR_SECRET", "INTERNAL_API_TOKEN", "WEBHOOK_SECRET_KEY")
BILLING_SECRETS = (
    "CURSOR_SECRET",
    "INTERNAL_API_TOKEN",
    "BILLING_SECRET_KEY",
    "BILLING_CLIENT_ID",
    "BILLING_WEBHOOK_SECRET",
    "BILLING_TOKEN_KEY",
    "BILLING_STATE_SECRET",
)
CONSOLE_SECRETS = ("CONSOLE_API_TOKEN", "CONSOLE_SECRET_KEY")
MAIL_FROM = "console@dealpricing.localhost"


@dataclass(frozen=True)
class Process:
    name: str
    command: list[str]
    env: dict[str, str]
    ready_url: str | None = None  # answers 200 once the process serves
    files: tuple[tuple[Path, str], ...] = ()  # (path, text) written just before it starts (its config)


@dataclass(frozen=True)
class System:
    api_env: dict[str, str]
    webhooks_env: dict[str, str]
    billing_env: dict[str, str]
    console_env: dict[str, str]
    processes: list[Process]  # in start order: the stand-in and the mailbox first, then each service

    def migrations(self) -> list[Process]:
        return [
            Process("api migrations", [str(BIN / "dealpricing-admin"), "migrate"], self.api_env),
            Process("webhook dispatcher migrations", [str(BIN / "dealpricing-webhooks"), "migrate"], self.webhooks_env),
            Process("billing connector migrations", [str(BIN / "dealpricing-billing"), "migrate"], self.billing_env),
            Process("console migrations", [str(BIN / "dealpricing-console"), "migrate"], self.console_env),
        ]


def plan(config: RunConfig, dbs: Databases, generated: Mapping[str, str]) -> System:
    env = config.environ

    def secrets(names: tuple[str, ...]) -> dict[str, str]:
        return {name: env.get(name) or generated[name] for name in names}

    # behind the proxy, as pods behind an ingress: the services listen on loopback, and the proxy's
    # X-Forwarded-For (the client's address; Caddy never passes on a client's own) keys the per-client
    # rate limits (RATE_LIMIT_TRUSTED_PROXIES: the proxy, on loopback)
    trusted = {"RATE_LIMIT_TRUSTED_PROXIES": env.get("RATE_LIMIT_TRUSTED_PROXIES") or f"{INTERNAL_HOST}/32"}
    # each process's database pool (DATABASE_POOL_SIZE, DATABASE_MAX_OVERFLOW): one connection kept
    # between uses, four more while busy, so that the whole of make run holds under 25 of PostgreSQL's
    # 100 (README, "Database connections"; tools/dev-run/tests/test_make_run_connections.py counts them)
    pools = {name: env.get(name) or size for name, size in (("DATABASE_POOL_SIZE", "1"), ("DATABASE_MAX_OVERFLOW", "4"))}
    common = {"HOST": INTERNAL_HOST, "AMQP_URL": config.amqp_url, **trusted, **pools,
              "REDIS_URL": config.redis_url}  # the rate limits' and the webhook throttle's one store (dps_dev.redis_server)
    # every metrics server listens where the services do (HOST), on its own port or not at all: the
    # environment's *_METRICS_PORT variables go to the one process each names, never to another
    env = {name: value for name, value in env.items() if name not in METRICS_PORTS}
    metrics_hosts = {name: config.host for name in ("RELAY_METRICS_HOST", "WEBHOOK_WORKER_METRICS_HOST",
                                                    "BILLING_WORKER_METRICS_HOST")}
    common.update({name: config.environ.get(name) or host for name, host in metrics_hosts.items()})
    metrics = {name: str(port) for name, port in config.metrics_ports.items()}
    api_url = config.internal("API_PORT")  # the api's internal endpoints: key introspection, quote snapshots
    # the one API document: the api merges the dispatcher's and the connector's own into its /external/v1/openapi.json
    parts = ",".join(config.internal(port) + "/internal/v1/openapi.json" for port in ("WEBHOOKS_PORT", "BILLING_PORT"))
    api_env = {
        **env,
        **secrets(API_SECRETS),
        **common,
        "DATABASE_URL": dbs.api,
        "PORT": str(config.ports["API_PORT"]),
        "OPENAPI_PART_URLS": env.get("OPENAPI_PART_URLS") or parts,
        # the document's servers: the one address (Try it out on the reference page, generated clients)
        "PUBLIC_API_URL": env.get("PUBLIC_API_URL") or config.public_api_url,
    }
    webhooks_env = {
        **env,
        **secrets(WEBHOOKS_SECRETS),
        **common,
        "DATABASE_URL": dbs.webhooks,
        "PORT": str(config.ports["WEBHOOKS_PORT"]),
        "API_URL": api_url,
        # a development runner: plain http:// to a receiver on this machine (a loopback address) is
        # delivered to unless WEBHOOK_ALLOW_INSECURE_LOOPBACK=false (the setting needs DPS_ENVIRONMENT=development)
        "DPS_ENVIRONMENT": "development",
        "WEBHOOK_ALLOW_INSECURE_LOOPBACK": env.get("WEBHOOK_ALLOW_INSECURE_LOOPBACK") or "true",
        **_only(metrics, "WEBHOOK_WORKER_METRICS_PORT"),
    }
    # the browser and the platform reach the connector at the one address, as through the ingress
    callback = config.public_api_url + "/billing-connection/callback"
    billing_secrets = secrets(BILLING_SECRETS)
    if config.real_billing_platform:
        # a real app (e.g. Stripe test mode): its settings and URLs as given (unset URLs: the
        # connector's defaults, Stripe's); its redirect URI, unless given, is this connector's callback
        platform = {name: env[name] for name in BILLING_URLS if env.get(name)}
        platform.setdefault("BILLING_REDIRECT_URI", callback)
    else:
        stand_in = config.origin("BILLING_STAND_IN_PORT")
        platform = {  # the stand-in's addresses, as its README gives them
            "BILLING_API_URL": stand_in,
            "BILLING_MARKETPLACE_URL": stand_in + "/marketplace",
            "BILLING_DASHBOARD_URL": stand_in,
            "BILLING_REDIRECT_URI": callback,
            "BILLING_RETURN_URL": stand_in + "/",  # its control page: the installs, quotes and webhooks
        }
    billing_env = {
        **{name: value for name, value in env.items() if name not in BILLING_URLS},
        **billing_secrets,
        **common,
        "DATABASE_URL": dbs.billing,
        "PORT": str(config.ports["BILLING_PORT"]),
        "API_URL": api_url,
        **platform,
        # the console's connect flow comes back to the console (a returnUrl under it)
        "CONSOLE_URL": env.get("CONSOLE_URL") or config.console_url,
        **_only(metrics, "BILLING_WORKER_METRICS_PORT"),
    }
    console_env = {
        **env,
        **secrets(CONSOLE_SECRETS),
        **pools,
        "HOST": INTERNAL_HOST,
        "DATABASE_URL": dbs.console,
        "PORT": str(config.ports["CONSOLE_PORT"]),
        # the console calls each service directly, inside, as in a deployment
        "API_URL": config.internal("API_PORT") + EXTERNAL,
        "API_INTERNAL_URL": api_url,
        "WEBHOOKS_URL": config.internal("WEBHOOKS_PORT") + EXTERNAL,
        "BILLING_URL": config.internal("BILLING_PORT") + EXTERNAL,
        # sign-in requests are limited per client: the proxy's X-Forwarded-For entry names it
        "CONSOLE_TRUSTED_PROXY_HOPS": env.get("CONSOLE_TRUSTED_PROXY_HOPS") or "1",
        # the development mailbox's SMTP sink: every mail is kept and shown on its page, none leaves
        "SMTP_URL": env.get("SMTP_URL") or f"smtp://{config.connect_host}:{config.ports['SMTP_PORT']}",
        "MAIL_FROM": env.get("MAIL_FROM") or MAIL_FROM,
        "CONSOLE_PUBLIC_URL": config.console_url,
        "DPS_ENVIRONMENT": "development",  # plain http:// on this machine (no Secure cookie)
        # one developer asks for many links (every start prints one): the limits stay, loosened
        "CONSOLE_SIGN_IN_PER_EMAIL": env.get("CONSOLE_SIGN_IN_PER_EMAIL") or "100",
        "CONSOLE_SIGN_IN_PER_CLIENT": env.get("CONSOLE_SIGN_IN_PER_CLIENT") or "1000",
    }
    mailbox = Process(
        "development mailbox",
        [
            str(BIN / "dealpricing-dev"), "mailbox",
            "--host", config.host,
            "--smtp-port", str(config.ports["SMTP_PORT"]),
            "--port", str(config.ports["MAILBOX_PORT"]),
            "--folder", str(config.run_dir / "mail"),
        ],
        dict(env),
        config.origin("MAILBOX_PORT") + "/",
    )
    stand_in_process = None if config.real_billing_platform else Process(
        "billing platform stand-in",
        [
            str(BIN / "dps-billing-stand-in"),
            "--host", config.host,
            "--port", str(config.ports["BILLING_STAND_IN_PORT"]),
            "--secret-key", billing_secrets["BILLING_SECRET_KEY"],
            "--client-id", billing_secrets["BILLING_CLIENT_ID"],
            "--redirect-uri", callback,
            "--webhook-url", config.public_api_url + "/billing-platform/webhooks",
            "--webhook-secret", billing_secrets["BILLING_WEBHOOK_SECRET"],
        ],
        dict(env),
        config.origin("BILLING_STAND_IN_PORT") + "/",
    )
    ready = "/readyz"
    relay_ports = {"api": _only(metrics, "RELAY_METRICS_PORT"),
                   "billing": _renamed(metrics, "BILLING_RELAY_METRICS_PORT", "RELAY_METRICS_PORT")}
    processes = [
        *([stand_in_process] if stand_in_process else []),
        mailbox,
        Process("api", [*GUNICORN, "dps_api.wsgi:create()"], api_env, api_url + ready),
        Process("api outbox relay", [str(BIN / "dps-outbox-relay")], {**api_env, **relay_ports["api"]}),
        Process("webhook dispatcher", [*GUNICORN, "dps_webhooks.wsgi:create()"], webhooks_env,
                config.internal("WEBHOOKS_PORT") + ready),
        Process("webhook worker", [str(BIN / "dealpricing-webhooks"), "worker"], webhooks_env),
        Process("billing connector", [*GUNICORN, "dps_billing.wsgi:create()"], billing_env,
                config.internal("BILLING_PORT") + ready),
        Process("billing worker", [str(BIN / "dealpricing-billing"), "worker"], billing_env),
        Process("billing outbox relay", [str(BIN / "dps-outbox-relay")], {**billing_env, **relay_ports["billing"],
                                                                      "SERVICE_NAME": "billing-connector"}),
        Process("settings console", [*GUNICORN, "dps_console.wsgi:create()"], console_env,
                config.internal("CONSOLE_PORT") + ready),
        # the console's sign-in mails, sent from its queue (the pages never wait for the mail server)
        Process("console mail worker", [str(BIN / "dealpricing-console"), "worker"], console_env),
        proxy_process(config, env),  # last: the first to stop
    ]
    return System(api_env, webhooks_env, billing_env, console_env, replicated(config, processes))


def proxy_process(config: RunConfig, env: Mapping[str, str]) -> Process:
    """Caddy on HOST:PORT in front of the four services (its config written to the run folder)."""
    upstreams = {service: config.upstreams(port) for service, port in proxy.BACKENDS.items()}
    # with replicas, each service's own port is its Service address, balancing between them (dps_dev.replicas)
    services = {config.dial(port): config.upstreams(port) for port in BEHIND_PROXY} if config.replicas > 1 else None
    folder = config.run_dir / "proxy"
    path = folder / "caddy.json"
    caddy = proxy.caddy_config(config.listen, upstreams, proxy.ingress_routes(), folder / "data", services)
    # Caddy's own folders (XDG) in the run folder too: nothing of it in the user's home
    caddy_env = {**env, "XDG_CONFIG_HOME": str(folder / "config"), "XDG_DATA_HOME": str(folder / "data")}
    return Process("proxy", [str(BIN / "caddy"), "run", "--config", str(path)], caddy_env,
                   config.public_origin + proxy.HEALTH_PATH, files=((path, proxy.config_text(caddy)),))


def _only(values: dict[str, str], name: str) -> dict[str, str]:
    return {name: values[name]} if name in values else {}


def _renamed(values: dict[str, str], name: str, as_name: str) -> dict[str, str]:
    return {as_name: values[name]} if name in values else {}
