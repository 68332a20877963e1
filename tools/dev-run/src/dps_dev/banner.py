"""What ``make run`` prints once everything answers: where each service is, the admin key, and the
lines to paste into another terminal (the README's "Try it" commands use exactly these variables)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dps_api.cli.seed import DemoSeed
from dps_dev.config import INTERNAL_HOST, RunConfig
from dps_dev.databases import Databases

RULE = "=" * 96


def exports(config: RunConfig, admin_key: str) -> str:
    """The shell lines that set DPS_KEY and the API's one base URL."""
    return f"export DPS_KEY='{admin_key}'\nexport API={config.public_api_url}"


@dataclass(frozen=True)
class ConsoleSignIn:
    """The demo admin's sign-in link, or why there is none."""

    email: str
    link: str | None
    problem: str = ""


def banner(config: RunConfig, demo: DemoSeed, dbs: Databases, sign_in: ConsoleSignIn) -> str:
    key = demo.admin_key or ""
    run_dir = _shown(config.run_dir)
    loopback = config.environ.get("WEBHOOK_ALLOW_INSECURE_LOOPBACK", "").strip().lower() not in ("false", "0")
    lines = [
        RULE,
        " Deal Pricing Service is up (development: plain HTTP on this machine; a deployment has one HTTPS ingress)",
        f"   API                  {config.public_api_url}   (the whole API: quotes, webhooks, billing)",
        f"   API reference        {config.public_api_url}/docs   (Try it out works for every operation;"
        f" the document: {config.public_api_url}/openapi.json)",
        f"   settings console     {config.console_url}/   (API keys, team, webhooks, billing integration)",
        _billing_platform_line(config),
        f"   mailbox              {config.origin('MAILBOX_PORT')}/   (every mail the console sent; nothing is delivered)",
        *_sign_in_lines(config, sign_in),
        f"   organization         {demo.organization_name} ({demo.organization_id})",
        f"   admin API key        {key}",
        f"                        (the same key on every start, kept in {run_dir}/demo-key.env; a new one if it stops working)",
        f"   one address          {config.public_origin}: Caddy routes by path as the ingress does, to the api"
        f" :{config.ports['API_PORT']}, the webhook dispatcher :{config.ports['WEBHOOKS_PORT']}, the billing"
        f" connector :{config.ports['BILLING_PORT']}, the console :{config.ports['CONSOLE_PORT']} (on {INTERNAL_HOST})",
        f"   PostgreSQL           {dbs.description} (databases per service)",
        f"   events               {_redacted(config.amqp_url)}",
        _rate_limits_line(config),
        "   webhooks             "
        + (
            "https, or plain http:// to a receiver on this machine (a loopback address: development only;"
            " WEBHOOK_ALLOW_INSECURE_LOOPBACK=false make run for https only)"
            if loopback
            else "https only (WEBHOOK_ALLOW_INSECURE_LOOPBACK=false); the README's receiver needs it unset"
        ),
        " In another terminal, in this folder (README.md, \"Try it\", goes on from here):",
        *("   " + line for line in exports(config, key).splitlines()),
        '   curl -s -H "x-api-key: $DPS_KEY" $API/whoami',
        '   curl -s -H "x-api-key: $DPS_KEY" "$API/pricing-quotes?limit=5"',
        f"   .venv/bin/dealpricing-admin keys list --org {demo.organization_id}   (finds this run in {run_dir})",
        f" Ctrl-C stops everything{', PostgreSQL last' if dbs.embedded else ''}.",
        RULE,
    ]
    return "\n" + "\n".join(lines) + "\n"


def _rate_limits_line(config: RunConfig) -> str:
    if config.redis_url.startswith("memory://"):  # REDIS_URL=memory:// asks for it
        return "   rate limits          counted per process (memory://): each process and worker has its own budget"
    embedded = " (embedded, no persistence; REDIS_URL for another)" if config.redis_embedded else ""
    return f"   rate limits          counted in {_redacted(config.redis_url)}{embedded}, shared by every process, as deployed"


def _billing_platform_line(config: RunConfig) -> str:
    if config.real_billing_platform:
        api = config.environ.get("BILLING_API_URL") or "Stripe's API"
        return (f"   billing platform     {api}   (the app of BILLING_CLIENT_ID: no stand-in; its webhooks to"
                f" {config.public_api_url}/billing-platform/webhooks)")
    return (f"   billing platform     {config.origin('BILLING_STAND_IN_PORT')}/   (the stand-in, a test double of Stripe:"
            " installs, quotes, webhooks)")


def _sign_in_lines(config: RunConfig, sign_in: ConsoleSignIn) -> list[str]:
    if sign_in.link:
        return [
            f"   sign in as admin     {sign_in.link}",
            f"                        ({sign_in.email}; open it, press Sign in: once, within 15 minutes;"
            " a new one from the console's sign-in page, then the mailbox)",
        ]
    return [f"   sign in as admin     no link ({sign_in.problem}); ask at {config.console_url}/sign-in"
            f" for {sign_in.email}, then open the mailbox"]


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _redacted(url: str) -> str:
    """The URL without its password."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at or ":" not in credentials:
        return url
    return f"{scheme}{sep}{credentials.split(':', 1)[0]}:***@{host}"
