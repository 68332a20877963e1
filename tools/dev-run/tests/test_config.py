"""What ``make run`` would start, from the environment alone (``RunConfig`` and ``plan``; nothing
started): the billing platform it uses, where the metrics servers listen, the dispatcher's loopback
receivers."""

from __future__ import annotations

import json

import pytest

from dps_testing.processes import free_port

from dps_dev.config import ConfigError, RunConfig
from dps_dev.databases import Databases
from dps_dev.secrets_file import GENERATED
from dps_dev.system import System, plan

PORTS = ("PORT", "API_PORT", "WEBHOOKS_PORT", "BILLING_PORT", "CONSOLE_PORT", "BILLING_STAND_IN_PORT", "MAILBOX_PORT", "SMTP_PORT")
BEHIND = ("API_PORT", "WEBHOOKS_PORT", "BILLING_PORT", "CONSOLE_PORT")
DBS = Databases("postgresql://x/dps_api", "postgresql://x/dps_webhooks", "postgresql://x/dps_billing",
                "postgresql://x/dps_console", "test", embedded=False)
STRIPE_APP = {
    "BILLING_CLIENT_ID": "ca_RealTestModeApp0001",
    "BILLING_SECRET_KEY": "sk_test_RealTestModeKey0001",
    "BILLING_WEBHOOK_SECRET": "whsec_RealTestModeSecret0001",
    "BILLING_API_URL": "https://api.stripe.com",
    "BILLING_MARKETPLACE_URL": "https://marketplace.stripe.com",
    "BILLING_DASHBOARD_URL": "https://dashboard.stripe.com",
    "BILLING_REDIRECT_URI": "https://dev.example.test/external/v1/billing-connection/callback",
    "BILLING_RETURN_URL": "https://dashboard.stripe.com/test/apps",
}


def _environ(**env: str) -> dict[str, str]:
    return {"DPS_RUN_DIR": "/tmp/dps-config-test/.run", **{name: str(free_port()) for name in PORTS}, **env}


def _plan(**env: str) -> tuple[RunConfig, System]:
    config = RunConfig.from_env(_environ(**env))
    return config, plan(config, DBS, {name: make() for name, make in GENERATED.items()})


def _process(system: System, name: str) -> dict[str, str]:
    [process] = [p for p in system.processes if p.name == name]
    return process.env


def test_a_real_billing_platform_is_used_with_its_urls_and_no_stand_in_starts():
    config, system = _plan(**STRIPE_APP)
    assert config.real_billing_platform
    assert "billing platform stand-in" not in [p.name for p in system.processes]
    for process in ("billing connector", "billing worker", "billing outbox relay"):
        env = _process(system, process)
        assert {name: env[name] for name in STRIPE_APP} == STRIPE_APP
    stand_in_port = ":" + config.environ["BILLING_STAND_IN_PORT"]
    assert not [value for value in system.billing_env.values() if stand_in_port in value]


def test_a_real_app_without_its_urls_gets_the_connectors_defaults_and_this_connectors_callback():
    app = {name: STRIPE_APP[name] for name in ("BILLING_CLIENT_ID", "BILLING_SECRET_KEY", "BILLING_WEBHOOK_SECRET")}
    config, system = _plan(**app)
    assert "billing platform stand-in" not in [p.name for p in system.processes]
    assert "BILLING_API_URL" not in system.billing_env  # the connector's default: Stripe's API
    assert system.billing_env["BILLING_REDIRECT_URI"] == config.public_api_url + "/billing-connection/callback"
    assert system.billing_env["BILLING_SECRET_KEY"] == app["BILLING_SECRET_KEY"]


def test_half_a_real_app_is_refused_before_anything_starts():
    with pytest.raises(ConfigError, match="BILLING_WEBHOOK_SECRET not set"):
        RunConfig.from_env(_environ(BILLING_CLIENT_ID="ca_x", BILLING_SECRET_KEY="sk_test_x"))


def test_without_a_real_app_the_stand_in_is_the_platform():
    config, system = _plan(BILLING_API_URL="https://api.stripe.com")  # a URL alone is no app
    stand_in = config.origin("BILLING_STAND_IN_PORT")
    assert "billing platform stand-in" in [p.name for p in system.processes]
    assert system.billing_env["BILLING_API_URL"] == stand_in


def test_each_metrics_port_goes_to_one_process_and_every_metrics_server_binds_host():
    relay, billing_relay = free_port(), free_port()
    config, system = _plan(HOST="127.0.0.1", RELAY_METRICS_PORT=str(relay), BILLING_RELAY_METRICS_PORT=str(billing_relay))
    assert _process(system, "api outbox relay")["RELAY_METRICS_PORT"] == str(relay)
    assert _process(system, "billing outbox relay")["RELAY_METRICS_PORT"] == str(billing_relay)
    for process in system.processes:
        if process.name not in ("api outbox relay", "billing outbox relay"):
            assert "RELAY_METRICS_PORT" not in process.env, process.name
        for name in ("RELAY_METRICS_HOST", "WEBHOOK_WORKER_METRICS_HOST", "BILLING_WORKER_METRICS_HOST"):
            assert process.env.get(name, "127.0.0.1") == "127.0.0.1", (process.name, name)
    assert _process(system, "api outbox relay")["RELAY_METRICS_HOST"] == "127.0.0.1"
    assert _process(system, "webhook worker")["WEBHOOK_WORKER_METRICS_HOST"] == "127.0.0.1"
    assert _process(system, "billing worker")["BILLING_WORKER_METRICS_HOST"] == "127.0.0.1"


def test_only_the_api_relay_serves_metrics_when_relay_metrics_port_alone_is_set():
    port = free_port()
    _, system = _plan(RELAY_METRICS_PORT=str(port))
    assert _process(system, "api outbox relay")["RELAY_METRICS_PORT"] == str(port)
    assert "RELAY_METRICS_PORT" not in _process(system, "billing outbox relay")


def test_a_metrics_port_taken_by_a_service_is_refused():
    env = _environ()
    with pytest.raises(ConfigError, match="RELAY_METRICS_PORT=.* is already the port of another service"):
        RunConfig.from_env({**env, "RELAY_METRICS_PORT": env["PORT"]})


def test_the_dispatcher_delivers_to_loopback_http_receivers_unless_told_not_to():
    _, system = _plan()
    assert system.webhooks_env["DPS_ENVIRONMENT"] == "development"
    assert system.webhooks_env["WEBHOOK_ALLOW_INSECURE_LOOPBACK"] == "true"
    _, system = _plan(WEBHOOK_ALLOW_INSECURE_LOOPBACK="false")
    assert system.webhooks_env["WEBHOOK_ALLOW_INSECURE_LOOPBACK"] == "false"


def test_one_address_the_proxy_on_host_the_services_behind_it_on_loopback():
    config, system = _plan(HOST="0.0.0.0")
    public = f"http://127.0.0.1:{config.ports['PORT']}"
    [proxy] = [p for p in system.processes if p.name == "proxy"]
    assert system.processes[-1] is proxy  # started last, stopped first
    [(path, text)] = proxy.files
    assert path.parent == config.run_dir / "proxy" and str(path) in proxy.command
    caddy = json.loads(text)
    assert caddy["admin"]["disabled"] and caddy["apps"]["http"]["servers"]["dps"]["listen"] == [f"0.0.0.0:{config.ports['PORT']}"]
    dials = {handler["upstreams"][0]["dial"] for route in caddy["apps"]["http"]["servers"]["dps"]["routes"]
             for handler in route["handle"] if handler["handler"] == "reverse_proxy"}
    assert dials == {f"127.0.0.1:{config.ports[name]}" for name in ("API_PORT", "WEBHOOKS_PORT", "BILLING_PORT", "CONSOLE_PORT")}
    for env in (system.api_env, system.webhooks_env, system.billing_env, system.console_env):
        assert env["HOST"] == "127.0.0.1"
    assert system.api_env["PORT"] == str(config.ports["API_PORT"])
    # what browsers, clients and the platform reach: the one address
    assert system.api_env["PUBLIC_API_URL"] == public + "/external/v1"
    assert system.console_env["CONSOLE_PUBLIC_URL"] == system.billing_env["CONSOLE_URL"] == public + "/console"
    assert system.billing_env["BILLING_REDIRECT_URI"] == public + "/external/v1/billing-connection/callback"
    # what the services call among themselves: each other, directly
    assert system.console_env["WEBHOOKS_URL"] == f"http://127.0.0.1:{config.ports['WEBHOOKS_PORT']}/external/v1"
    assert system.webhooks_env["API_URL"] == f"http://127.0.0.1:{config.ports['API_PORT']}"
    # the per-client limits count the address the proxy names
    assert system.api_env["RATE_LIMIT_TRUSTED_PROXIES"] == "127.0.0.1/32"
    assert system.console_env["CONSOLE_TRUSTED_PROXY_HOPS"] == "1"


def test_the_services_that_limit_rates_count_in_the_runs_redis():
    """The Redis the runner started (or REDIS_URL's) is every rate-limiting process's store: one budget
    per organization whichever process or gunicorn worker answers, and the webhook workers' turns for
    an endpoint's rateLimitPerSecond, shared by every worker (two with DPS_REPLICAS=2)."""
    from dataclasses import replace

    config = replace(RunConfig.from_env(_environ()), redis_url="redis://127.0.0.1:6390/0", redis_embedded=True)
    system = plan(config, DBS, {name: make() for name, make in GENERATED.items()})
    for name in ("api", "api outbox relay", "webhook dispatcher", "webhook worker", "billing connector"):
        assert _process(system, name)["REDIS_URL"] == "redis://127.0.0.1:6390/0", name


def test_two_replicas_run_two_of_every_service_process_behind_balanced_addresses():
    """DPS_REPLICAS=2: each HTTP server twice on ports of its own, each relay and worker twice (the
    metrics ports to the first only); the one address and each service's own address (what the
    services call) balance between the two; the stand-in, the mailbox and the proxy stay single."""
    replica_ports = {f"{name}_{r}": str(free_port()) for name in BEHIND for r in (1, 2)}
    metrics = {name: str(free_port()) for name in ("RELAY_METRICS_PORT", "WEBHOOK_WORKER_METRICS_PORT")}
    config, system = _plan(DPS_REPLICAS="2", **replica_ports, **metrics)
    names = [p.name for p in system.processes]
    for single in ("billing platform stand-in", "development mailbox", "proxy"):
        assert names.count(single) == 1
    for name in ("api", "api outbox relay", "webhook dispatcher", "webhook worker", "billing connector",
                 "billing worker", "billing outbox relay", "settings console", "console mail worker"):
        assert [n for n in names if n.rsplit(" ", 1)[0] == name] == [f"{name} 1", f"{name} 2"], names
    assert _process(system, "api 2")["PORT"] == replica_ports["API_PORT_2"]
    [api_2] = [p for p in system.processes if p.name == "api 2"]
    assert api_2.ready_url == f"http://127.0.0.1:{replica_ports['API_PORT_2']}/readyz"
    assert _process(system, "api outbox relay 1")["RELAY_METRICS_PORT"] == metrics["RELAY_METRICS_PORT"]
    assert "RELAY_METRICS_PORT" not in _process(system, "api outbox relay 2")
    assert "WEBHOOK_WORKER_METRICS_PORT" not in _process(system, "webhook worker 2")
    # the services still call each other at each service's own address: now the proxy's, balanced
    assert system.webhooks_env["API_URL"] == f"http://127.0.0.1:{config.ports['API_PORT']}"
    [proxy] = [p for p in system.processes if p.name == "proxy"]
    servers = json.loads(proxy.files[0][1])["apps"]["http"]["servers"]
    public = {tuple(u["dial"] for u in handler["upstreams"]) for route in servers["dps"]["routes"]
              for handler in route["handle"] if handler["handler"] == "reverse_proxy"}
    pairs = {tuple(f"127.0.0.1:{replica_ports[f'{name}_{r}']}" for r in (1, 2)) for name in BEHIND}
    assert public == pairs
    service_addresses = {server["listen"][0]: tuple(u["dial"] for u in server["routes"][0]["handle"][0]["upstreams"])
                         for name, server in servers.items() if name != "dps"}
    assert service_addresses == {f"127.0.0.1:{config.ports[name]}": tuple(
        f"127.0.0.1:{replica_ports[f'{name}_{r}']}" for r in (1, 2)) for name in BEHIND}
    # a replica gets requests only while its /readyz answers (one started again listens before it serves)
    balanced = [handler for server in servers.values() for route in server["routes"] for handler in route["handle"]
                if handler["handler"] == "reverse_proxy"]
    assert {h["health_checks"]["active"]["uri"] for h in balanced} == {"/readyz"}
    assert {h["load_balancing"]["selection_policy"]["policy"] for h in balanced} == {"round_robin"}


def test_one_replica_is_make_runs_default_and_more_than_two_is_refused():
    _, system = _plan()
    assert "api" in [p.name for p in system.processes] and "api 1" not in [p.name for p in system.processes]
    with pytest.raises(ConfigError, match="DPS_REPLICAS must be 1 to 2, got '3'"):
        RunConfig.from_env(_environ(DPS_REPLICAS="3"))
