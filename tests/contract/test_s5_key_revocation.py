"""Spec section 5, rotate and revoke, in every service: a key revoked or rotated with the admin
command line answers 401 ``Invalid API key.`` from the api, the webhook dispatcher and the billing
connector within two seconds, though all three cache key lookups for a minute here.

The suite's shared stack caches keys for 1 s, which would pass this without key events; this module
starts its own api (two gunicorn workers), dispatcher and connector with a 60-second key cache, on the suite's
database, virtual host and outbox relay. Every worker caches the key first; only the key event
(outbox, relay, RabbitMQ, each worker's own subscription) can end it in time."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import requests

from dps_testing.processes import gunicorn
from dps_testing.provisioning import Admin, Member

from contract_client import INVALID_KEY

KEY_CACHE_TTL_SECONDS = "60"
WITHIN_SECONDS = 2.0  # the promise, measured from the command's return
TRIES = 12  # new connections per check: both gunicorn workers answer some of them


@pytest.fixture(scope="module")
def api_origin(server_env: dict[str, str], tls_files: dict[str, str], stack_logs) -> Iterator[str]:
    env = {**server_env, "KEY_CACHE_TTL_SECONDS": KEY_CACHE_TTL_SECONDS}
    log = stack_logs.path("api (revocation)")
    with gunicorn("dps_api.wsgi:create()", env, tls_files, log, workers=2) as origin:
        yield origin


@pytest.fixture(scope="module")
def dispatcher_origin(
    webhooks_env: dict[str, str], api_origin: str, tls_files: dict[str, str], stack_logs
) -> Iterator[str]:
    env = {**webhooks_env, "API_URL": api_origin, "KEY_CACHE_TTL_SECONDS": KEY_CACHE_TTL_SECONDS}
    log = stack_logs.path("webhook dispatcher (revocation)")
    with gunicorn("dps_webhooks.wsgi:create()", env, tls_files, log, workers=2) as origin:
        yield origin


@pytest.fixture(scope="module")
def connector_origin(
    billing_env: dict[str, str], api_origin: str, tls_files: dict[str, str], stack_logs
) -> Iterator[str]:
    env = {**billing_env, "API_URL": api_origin, "KEY_CACHE_TTL_SECONDS": KEY_CACHE_TTL_SECONDS}
    log = stack_logs.path("billing connector (revocation)")
    with gunicorn("dps_billing.wsgi:create()", env, tls_files, log, workers=2) as origin:
        yield origin


@pytest.fixture(scope="module")
def services(api_origin: str, dispatcher_origin: str, connector_origin: str, outbox_relay) -> dict[str, str]:
    """Each service's URL of an operation any admin key may call (the connector's answers 404, no
    connection, once the key is accepted)."""
    return {
        "api": f"{api_origin}/external/v1/whoami",
        "dispatcher": f"{dispatcher_origin}/external/v1/webhook-configs",
        "connector": f"{connector_origin}/external/v1/billing-connection",
    }


def answers(url: str, key: str, ca_file: str) -> list[tuple[int, str | None]]:
    """(status, problem detail) of ``TRIES`` requests, each on a new connection."""
    results = []
    for _ in range(TRIES):
        resp = requests.get(url, headers={"x-api-key": key, "Connection": "close"}, verify=ca_file, timeout=10)
        results.append((resp.status_code, resp.json().get("detail") if resp.status_code == 401 else None))
    return results


ACCEPTED = {200, 404}  # the key passed: the operation's own answer


def cache_everywhere(services: dict[str, str], member: Member, ca_file: str) -> None:
    for name, url in services.items():
        assert {status for status, _ in answers(url, member.key, ca_file)} <= ACCEPTED, name


def refused_everywhere_within(services: dict[str, str], key: str, ca_file: str, since: float) -> None:
    """Every service refuses the key on every connection, in a round of requests begun within
    ``WITHIN_SECONDS`` of ``since``."""
    for name, url in services.items():
        while True:
            started = time.monotonic() - since
            assert started <= WITHIN_SECONDS, f"{name} still accepted the key {started:.1f}s after the command"
            if set(answers(url, key, ca_file)) == {(401, INVALID_KEY)}:
                break


def test_a_revoked_key_is_refused_by_every_service_within_two_seconds(services, fresh_member, admin: Admin, tls_files):
    member = fresh_member("admin")
    cache_everywhere(services, member, tls_files["ca"])
    admin.revoke_key(member.key_row_id)
    refused_everywhere_within(services, member.key, tls_files["ca"], time.monotonic())


def test_a_rotated_key_is_refused_by_every_service_within_two_seconds_and_its_successor_works(
    services, fresh_member, admin: Admin, tls_files
):
    member = fresh_member("admin")
    cache_everywhere(services, member, tls_files["ca"])
    rotated = admin.rotate_key(member.key_row_id)
    refused_everywhere_within(services, member.key, tls_files["ca"], time.monotonic())
    for name, url in services.items():
        assert {status for status, _ in answers(url, rotated["key"], tls_files["ca"])} <= ACCEPTED, name
