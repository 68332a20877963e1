"""Signed platform webhooks (`account.application.authorized` / `.deauthorized`), sent by a background
thread in order, each delivery recorded with the answer's status."""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests
import stripe

from .ids import new_id


def application_event(kind: str, account: str, client_id: str, app_name: str, livemode: bool) -> dict[str, Any]:
    """An event as Stripe sends it to an app: the account is `event.account`, `data.object` the application."""
    return {
        "id": new_id("evt"),
        "object": "event",
        "account": account,
        "api_version": stripe.api_version,
        "created": int(time.time()),
        "data": {"object": {"id": client_id, "object": "application", "name": app_name}},
        "livemode": livemode,
        "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": None},
        "type": f"account.application.{kind}",
    }


@dataclass(frozen=True)
class WebhookDelivery:
    event_id: str
    event_type: str
    account: str
    url: str | None
    payload: str
    signature: str | None
    status: int | None  # None: not delivered (no URL, or the connection failed: see `error`)
    error: str | None
    response_body: str | None
    at: float


class WebhookSender:
    def __init__(self, secret: str, url: str | None, timeout: float = 10.0, verify: str | bool = True) -> None:
        self._secret = secret
        self._url = url
        self._verify = verify  # a CA bundle for a receiver with a test certificate, as requests takes it
        self._timeout = timeout
        self._lock = threading.Condition()
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._pending = 0
        self._events: list[dict[str, Any]] = []
        self._deliveries: list[WebhookDelivery] = []
        self._thread = threading.Thread(target=self._run, name="billing-stand-in-webhooks", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str | None:
        with self._lock:
            return self._url

    @url.setter
    def url(self, value: str | None) -> None:
        with self._lock:
            self._url = value

    def send(self, event: dict[str, Any]) -> None:
        with self._lock:
            self._events.append(event)
            self._pending += 1
        self._queue.put(event)

    def redeliver(self, event_id: str) -> None:
        with self._lock:
            event = next((e for e in self._events if e["id"] == event_id), None)
            if event is None:
                raise KeyError(event_id)
            self._pending += 1
        self._queue.put(event)

    def events(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._events)

    def deliveries(self) -> list[WebhookDelivery]:
        with self._lock:
            return list(self._deliveries)

    def wait_idle(self, timeout: float) -> bool:
        """Waits until every queued event has been attempted; False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: self._pending == 0, timeout)

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=self._timeout + 1)

    def _run(self) -> None:
        while (event := self._queue.get()) is not None:
            delivery = self._deliver(event)
            with self._lock:
                self._deliveries.append(delivery)
                self._pending -= 1
                self._lock.notify_all()

    def _deliver(self, event: dict[str, Any]) -> WebhookDelivery:
        url = self.url
        payload = json.dumps(event, indent=2)
        common = {"event_id": event["id"], "event_type": event["type"], "account": event["account"]}
        if url is None:
            return WebhookDelivery(**common, url=None, payload=payload, signature=None, status=None,
                                   error="no webhook URL configured", response_body=None, at=time.time())
        # Signed at sending time, as Stripe does on each attempt.
        signature = stripe.WebhookSignature.generate_signature_header(payload, self._secret)
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "Stripe-Signature": signature,
            "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
        }
        try:
            answer = requests.post(
                url, data=payload.encode("utf-8"), headers=headers, timeout=self._timeout, verify=self._verify
            )
        except requests.RequestException as exc:
            return WebhookDelivery(**common, url=url, payload=payload, signature=signature, status=None,
                                   error=f"{type(exc).__name__}: {exc}", response_body=None, at=time.time())
        return WebhookDelivery(**common, url=url, payload=payload, signature=signature, status=answer.status_code,
                               error=None, response_body=answer.text[:2000], at=time.time())
