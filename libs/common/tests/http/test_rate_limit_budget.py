"""Unit tests of the budget logic (no store): the numbers the RateLimit headers report, the refusal's
Retry-After, failing open with a metric and a throttled log line, the settings and the client address."""

from __future__ import annotations

import logging

import falcon.testing
import pytest
from limits import RateLimitItem, parse

from dps_common.http.rate_limit import client_address
from dps_common.ratelimit.budget import DECISIONS, STORE_ERRORS, Budget, Policy, decide
from dps_common.ratelimit.counters import LocalCounter, Window
from dps_common.ratelimit.settings import MEMORY_STORE, RateLimitSettings
from dps_common.settings import SettingsError

POLICY = Policy("organization", parse("100/second"))
MINUTE = Policy("anonymous", parse("60/minute"))


def test_an_allowed_request_reports_what_remains_and_when_the_window_ends() -> None:
    decision = decide(MINUTE, True, Window(0, 0.0, 3, 60 + 41.2))
    assert (decision.allowed, decision.remaining, decision.reset_seconds) == (True, 57, 42)


def test_the_last_window_weighs_by_its_overlap() -> None:
    # 40 requests last minute, 25 s of it still inside the window: floor(40 * 25 / 60) = 16 of them count
    decision = decide(MINUTE, True, Window(40, 25.0, 10, 60 + 35.0))
    assert decision.remaining == 60 - 16 - 10


def test_a_refusal_waits_for_the_last_window_to_weigh_one_request_less() -> None:
    # 60 last minute weighing 30 s (30 of them), 30 now: full. One fits once 60 * (30 - t) / 60 < 30, i.e. t > 0,
    # and floor makes it exact only past the boundary: Retry-After is the next whole second
    decision = decide(MINUTE, False, Window(60, 30.0, 30, 60 + 30.0))
    assert (decision.allowed, decision.remaining, decision.reset_seconds) == (False, 0, 1)
    # 60 last minute weighing 50 s (50 of them), 10 now: one fits when 60 * (50 - t) / 60 < 50, after 1 s; with
    # 12 now it takes 3 s (< 48)
    assert decide(MINUTE, False, Window(60, 50.0, 12, 60 + 10.0)).reset_seconds == 3


def test_a_refusal_when_this_window_alone_is_full_waits_for_its_end() -> None:
    decision = decide(MINUTE, False, Window(0, 0.0, 60, 60 + 20.4))
    assert decision.reset_seconds == 21  # then the 60 weigh 60 * (60 - t) / 60 < 60 at once


def test_delays_are_whole_seconds_within_the_window() -> None:
    assert decide(POLICY, False, Window(0, 0.0, 100, 1 + 0.3)).reset_seconds == 1
    assert decide(POLICY, True, Window(0, 0.0, 1, 1 + 0.999)).reset_seconds == 1
    assert decide(MINUTE, True, Window(0, 0.0, 1, 60 + 60.0)).reset_seconds == 60


def test_the_local_counter_refuses_past_the_quota() -> None:
    counter, item = LocalCounter(), parse("5/minute")
    taken = [counter.take(item, 1, "organization", "org-1")[0] for _ in range(7)]
    assert taken == [1] * 5 + [0] * 2
    assert counter.take(item, 1, "organization", "org-2")[0]  # another organization, another budget


def test_the_local_counter_takes_a_lease_whole_or_only_the_requests_unit() -> None:
    counter, item = LocalCounter(), parse("10/minute")
    assert counter.take(item, 4, "organization", "org-1")[0] == 4
    assert counter.take(item, 4, "organization", "org-1")[0] == 4
    taken, window = counter.take(item, 4, "organization", "org-1")  # 2 left: the request's unit only
    assert taken == 1 and window.current_count == 9


class _Unreachable:
    """A store that cannot answer, as a closed port makes it (the integration tests use a real one)."""

    errors = (ConnectionError,)
    shared = True

    def __init__(self) -> None:
        self.calls = 0

    def take(self, item: RateLimitItem, amount: int, *identifiers: str) -> tuple[int, Window]:
        self.calls += 1
        raise ConnectionError("connection refused")


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _sample(name: str, **labels: str) -> float:
    metric = DECISIONS if name == "decisions" else STORE_ERRORS
    for family in metric.collect():
        for sample in family.samples:
            if sample.name.endswith("_total") and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0


def test_an_unreachable_store_fails_open_with_a_metric_and_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    store, clock = _Unreachable(), _Clock()
    budget = Budget(store, "unit-fail-open", retry_after=1.0, log_every=10.0, clock=clock)
    caplog.set_level(logging.INFO, logger="dps.ratelimit")
    decisions = []
    for _ in range(50):
        decisions.append(budget.spend(POLICY, "org-1"))
        clock.now += 0.1  # 5 s of requests
    assert all(d.allowed and not d.counted and d.remaining == POLICY.quota for d in decisions)
    assert store.calls == 5  # one try per second, not one per request
    assert _sample("decisions", service="unit-fail-open", outcome="unchecked") == 50
    assert _sample("errors", service="unit-fail-open") == 5
    lines = [r for r in caplog.records if "unavailable" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.ERROR


def test_the_store_coming_back_is_logged_and_counting_resumes(caplog: pytest.LogCaptureFixture) -> None:
    class Flaky(_Unreachable):
        down = True

        def take(self, item: RateLimitItem, amount: int, *identifiers: str) -> tuple[int, Window]:
            if self.down:
                return super().take(item, amount, *identifiers)
            return 1, Window(0, 0.0, 1, 2.0)

    store, clock = Flaky(), _Clock()
    budget = Budget(store, "unit-recovery", clock=clock)
    caplog.set_level(logging.INFO, logger="dps.ratelimit")
    assert not budget.spend(POLICY, "org-1").counted
    store.down = False
    assert not budget.spend(POLICY, "org-1").counted  # within the pause: the store is not asked
    clock.now += 1.5
    assert budget.spend(POLICY, "org-1").counted
    assert any("available again" in r.getMessage() for r in caplog.records)


def test_settings_default_to_the_documented_limits_in_memory() -> None:
    settings = RateLimitSettings.from_env({})
    assert settings == RateLimitSettings()
    assert (settings.storage_url, settings.organization, settings.anonymous) == (MEMORY_STORE, "100/second", "60/minute")
    assert not settings.shared


def test_settings_name_every_bad_value() -> None:
    env = {"REDIS_URL": "http://cache:6379", "RATE_LIMIT_ORGANIZATION": "lots", "RATE_LIMIT_ANONYMOUS": "0/second",
           "RATE_LIMIT_DOCUMENTATION": "many", "RATE_LIMIT_TRUSTED_PROXIES": "10.0.0.0/33", "RATE_LIMIT_STORE_TIMEOUT_SECONDS": "9",
           "RATE_LIMIT_LEASE_SECONDS": "-1"}
    with pytest.raises(SettingsError) as error:
        RateLimitSettings.from_env(env)
    for name in ("REDIS_URL", "RATE_LIMIT_ORGANIZATION", "RATE_LIMIT_ANONYMOUS", "RATE_LIMIT_DOCUMENTATION",
                 "RATE_LIMIT_TRUSTED_PROXIES",
                 "RATE_LIMIT_STORE_TIMEOUT_SECONDS", "RATE_LIMIT_LEASE_SECONDS"):
        assert name in str(error.value)


def test_settings_read_limits_and_off() -> None:
    settings = RateLimitSettings.from_env({
        "REDIS_URL": "redis://cache:6379/2", "RATE_LIMIT_ORGANIZATION": "6000 per minute", "RATE_LIMIT_ANONYMOUS": "off",
        "RATE_LIMIT_LEASE_SECONDS": "0"})
    limit = settings.organization_limit()
    assert limit is not None and (limit.amount, limit.get_expiry()) == (6000, 60)
    assert settings.anonymous_limit() is None and settings.shared and settings.lease_seconds == 0
    assert RateLimitSettings().lease_seconds == 0.05
    documentation = settings.documentation_limit()  # the default: generous, apart from the anonymous budget
    assert documentation is not None and (documentation.amount, documentation.get_expiry()) == (300, 60)
    assert RateLimitSettings.from_env({"RATE_LIMIT_DOCUMENTATION": "off"}).documentation_limit() is None


def _request(remote: str, forwarded: str | None = None) -> falcon.Request:
    headers = {"X-Forwarded-For": forwarded} if forwarded else None
    return falcon.Request(falcon.testing.create_environ(path="/external/v1/whoami", remote_addr=remote, headers=headers))


def test_the_client_address_is_the_peer_unless_a_trusted_proxy_forwards() -> None:
    ingress = RateLimitSettings.from_env({"RATE_LIMIT_TRUSTED_PROXIES": "10.0.0.0/8"}).trusted_proxies
    assert client_address(_request("203.0.113.9", "198.51.100.1"), ()) == "203.0.113.9"  # no proxy trusted
    assert client_address(_request("203.0.113.9", "198.51.100.1"), ingress) == "203.0.113.9"  # not a proxy
    assert client_address(_request("10.1.2.3", "198.51.100.1"), ingress) == "198.51.100.1"
    # the entries left of the first untrusted hop are the client's to forge
    assert client_address(_request("10.1.2.3", "1.2.3.4, 198.51.100.1, 10.9.9.9"), ingress) == "198.51.100.1"
    assert client_address(_request("10.1.2.3", "junk, 198.51.100.1"), ingress) == "198.51.100.1"


def test_ipv6_clients_are_counted_per_64() -> None:
    assert client_address(_request("2001:db8:1:2:aaaa::1"), ()) == "2001:db8:1:2::/64"
    assert client_address(_request("2001:db8:1:2:bbbb::9"), ()) == "2001:db8:1:2::/64"
    assert client_address(_request("::ffff:192.0.2.7"), ()) == "192.0.2.7"
