"""What the webhook contract tests use: the dispatcher's API, a receiver path per test, api changes
that raise events, polling with a deadline (never a fixed sleep as an assertion) and Standard
Webhooks verification of what the receiver got, with the same library a customer would use."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from dps_testing.provisioning import Org
from dps_testing.webhook_receiver import Received, Receiver

import contract_data as data
from contract_client import Api

# Gaps before attempts 2..8, compressed from the spec's 30 s .. 1 h: still 7 gaps, so 8 attempts.
RETRY_GAPS = (0.2,) * 7
ATTEMPTS = len(RETRY_GAPS) + 1
DEADLINE_SECONDS = 30.0
POLL_SECONDS = 0.1
SETTLE_SECONDS = 2.0  # ten compressed gaps
REDIRECT_TARGET = "/ok"  # where the receiver's 302 answers point

T = TypeVar("T")


def wait_for(probe: Callable[[], T | None], what: str, timeout: float = DEADLINE_SECONDS) -> T:
    """Poll ``probe`` until it returns something other than None/False; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = probe()
        if last is not None and last is not False:
            return last
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:.0f}s: {what}", pytrace=False)
        time.sleep(POLL_SECONDS)


def verify(secret: str, request: Received) -> dict:
    """The payload of a received request whose Standard Webhooks signature ``secret`` verifies."""
    return Webhook(secret).verify(request.body, _signing_headers(request))


def verifies(secret: str, request: Received) -> bool:
    try:
        verify(secret, request)
    except WebhookVerificationError:
        return False
    return True


def _signing_headers(request: Received) -> dict[str, str]:
    return {name: request.headers.get(name, "") for name in ("webhook-id", "webhook-timestamp", "webhook-signature")}


@dataclass
class Endpoint:
    """A registered webhook endpoint: its record (with the secret shown at creation) and the
    receiver path it delivers to."""

    org: Org
    record: dict
    path: str

    @property
    def id(self) -> str:
        return self.record["id"]

    @property
    def secret(self) -> str:
        return self.record["secret"]


class Webhooks:
    """The running event path: the api (``api``), the dispatcher (``hooks``), the receiver."""

    def __init__(self, hooks: Api, api: Api, receiver: Receiver):
        self.hooks = hooks
        self.api = api
        self.receiver = receiver
        self._processes: list[subprocess.Popen] = []
        self._registered: list[Endpoint] = []

    def watch(self, *processes: subprocess.Popen) -> None:
        """Fail a wait at once, with a clear message, when one of these processes has died."""
        self._processes.extend(processes)

    # --- receiver paths ---

    def new_path(self) -> str:
        return f"/hooks/{uuid.uuid4().hex}"

    def url(self, path: str) -> str:
        return self.receiver.url(path)

    def respond(self, path: str, *answers: int | str) -> None:
        """The receiver's answers on ``path``, one per request in order, the last one repeating: a
        status (302 carries a Location to ``REDIRECT_TARGET``), or ``"hang"`` (no answer at all)."""
        self.receiver.answer(path, *answers)

    def settle(self) -> None:
        """Give anything more that would arrive time to arrive: several compressed retry gaps. For
        the assertions that something does NOT happen (a ninth attempt, a backfill), which no
        deadline can prove, only a window can."""
        time.sleep(SETTLE_SECONDS)

    def received(self, path: str) -> list[Received]:
        return self.receiver.requests_to(path)

    def wait_received(self, path: str, count: int, timeout: float = DEADLINE_SECONDS) -> list[Received]:
        """The first ``count`` requests the receiver got on ``path``, waiting for them."""
        return wait_for(
            lambda: self._at_least(path, count), f"{count} request(s) at the receiver on {path}", timeout
        )[:count]

    def _at_least(self, path: str, count: int) -> list[Received] | None:
        self.check_processes()
        got = self.received(path)
        return got if len(got) >= count else None

    # --- endpoints ---

    def register(self, org: Org, path: str | None = None, **fields: Any) -> Endpoint:
        path = path or self.new_path()
        body = {"url": self.url(path), **fields}
        record = self.hooks.ok("POST", "/webhook-configs", org.admin, json=body, status=201)
        endpoint = Endpoint(org, record, path)
        self._registered.append(endpoint)
        return endpoint

    def revoke_registered(self) -> None:
        """Revoke every endpoint registered so far, so a test's endpoints get none of the next
        test's events (tests share an organization: making one costs seconds)."""
        while self._registered:
            endpoint = self._registered.pop()
            self.hooks.delete(f"/webhook-configs/{endpoint.id}", endpoint.org.admin)  # done, or revoked already

    def record(self, endpoint: Endpoint) -> dict:
        return self.hooks.ok("GET", f"/webhook-configs/{endpoint.id}", endpoint.org.admin, status=200)

    def set_status(self, endpoint: Endpoint, status: str) -> dict:
        path = f"/webhook-configs/{endpoint.id}"
        return self.hooks.ok("PUT", path, endpoint.org.admin, json={"status": status}, status=200)

    def send_test(self, endpoint: Endpoint) -> dict:
        return self.hooks.ok("POST", f"/webhook-configs/{endpoint.id}/test", endpoint.org.admin, status=(200, 201, 202))

    # --- deliveries ---

    def deliveries(self, endpoint: Endpoint) -> list[dict]:
        """Every delivery of the endpoint, newest first (one walk of the paged list)."""
        return self.hooks.walk(f"/webhook-configs/{endpoint.id}/deliveries", endpoint.org.admin, "deliveries", limit=500)

    def wait_deliveries(
        self, endpoint: Endpoint, count: int, status: str, timeout: float = DEADLINE_SECONDS
    ) -> list[dict]:
        """Wait until ``count`` deliveries of the endpoint have ``status``; all its deliveries then."""

        def probe() -> list[dict] | None:
            self.check_processes()
            found = self.deliveries(endpoint)
            return found if sum(d["status"] == status for d in found) >= count else None

        return wait_for(probe, f"{count} {status} deliveries of webhook config {endpoint.id}", timeout)

    def wait_for_deliveries(self, endpoint: Endpoint, count: int) -> list[dict]:
        """Wait until the endpoint has ``count`` deliveries recorded, whatever their status."""
        return wait_for(
            lambda: (lambda found: found if len(found) >= count else None)(self.deliveries(endpoint)),
            f"{count} deliveries recorded for webhook config {endpoint.id}",
        )

    def wait_record(self, endpoint: Endpoint, what: str, check: Callable[[dict], bool]) -> dict:
        return wait_for(lambda: (lambda r: r if check(r) else None)(self.record(endpoint)), what)

    # --- events ---

    def raise_event(self, org: Org) -> dict:
        """A real api change (a new product, made by the admin): the api writes a ``product.created``
        event in the same transaction. Returns the product."""
        return data.product(self.api, org.admin)

    def wait_until_flowing(self, org: Org) -> None:
        """Prove the whole path once: keep making api changes until one reaches a fresh endpoint
        (the first may go before the worker has bound its queue; that loss is the broker's rule
        for a queue that does not exist yet, not the dispatcher's)."""
        endpoint = self.register(org)

        def probe() -> bool:
            if self.received(endpoint.path):
                return True
            self.raise_event(org)
            return bool(self._at_least_within(endpoint.path, 1, seconds=3))

        wait_for(probe, "an api change reaching the receiver through the relay, the broker and the worker", 90)
        self.hooks.ok("DELETE", f"/webhook-configs/{endpoint.id}", org.admin, status=(200, 204))

    def _at_least_within(self, path: str, count: int, seconds: float) -> list[Received] | None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            got = self._at_least(path, count)
            if got:
                return got
            time.sleep(POLL_SECONDS)
        return None

    def check_processes(self) -> None:
        for process in self._processes:
            if process.poll() is not None:
                pytest.fail(f"{' '.join(map(str, process.args))} exited with {process.returncode}", pytrace=False)


def payload(request: Received) -> dict:
    return json.loads(request.body)
