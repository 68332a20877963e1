"""Shared helpers for the dispatcher's integration tests and the bench: committed endpoints, events
and deliveries on a fresh database, and a delivery worker running in a thread.

Workers use their own connections, so these tests cannot use the rolled-back ``tx`` fixture: each
module gets its own migrated database (``webhook_database``) and commits for real.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from sqlalchemy import select, text, update
from sqlalchemy.orm import Session

from dps_common.crypto import new_key
from dps_common.db import Transactions, make_engine
from dps_common.events.envelope import envelope
from dps_common.json import dumps
from dps_testing.services import fresh_database

from dps_webhooks.adapters.signing_secrets import SecretSealer, new_signing_secret
from dps_webhooks.db.deliveries import hold_pending, release_held
from dps_webhooks.db.migrate import upgrade
from dps_webhooks.db.models import DeliveryAttempt, WebhookDelivery, WebhookEndpoint
from dps_webhooks.services.intake import IncomingEvent, accept_events, add_delivery, store_event
from dps_webhooks.settings import Settings
from dps_webhooks.workers.deliveries import DeliveryWorker


@contextmanager
def webhook_database(prefix: str = "dps_wh_it") -> Iterator[str]:
    """A new database with the dispatcher's migrations applied; dropped afterwards."""
    with fresh_database(prefix) as url:
        upgrade(url)
        yield url


def worker_process_env(database_url: str, amqp_url: str, ca_file: str, **overrides: str) -> dict[str, str]:
    """The environment of a ``dealpricing-webhooks worker`` process delivering to the test receiver
    on loopback: polls every 0.1 s, checks no keys (no api behind ``API_URL``), logs warnings only."""
    return {
        "DATABASE_URL": database_url,
        "AMQP_URL": amqp_url,
        "CURSOR_SECRET": "worker-cursor-secret-0123456789abcdef0123456789",
        "WEBHOOK_SECRET_KEY": new_key(),
        "API_URL": "https://127.0.0.1:9",
        "INTERNAL_API_TOKEN": "worker-internal-token-0123456789abcdef0123",
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "WEBHOOK_RECEIVER_CA_FILE": ca_file,
        "WEBHOOK_POLL_INTERVAL_SECONDS": "0.1",
        "LOG_LEVEL": "WARNING",
        **overrides,
    }


def incoming(organization_id: UUID, event_type: str = "quote.approved", data: Any = None) -> IncomingEvent:
    """An api event as the consumer receives it (the shared envelope, serialised)."""
    data = data if data is not None else {"quoteId": str(uuid.uuid4()), "total": "100.00"}
    return IncomingEvent.from_envelope(dumps(envelope(event_type, organization_id, data)).decode())


def accept_event(session: Session, event: IncomingEvent) -> int:
    """Store one event and its deliveries as the consumer would; 0 when it was already accepted."""
    return accept_events(session, [event]).deliveries


def add_endpoint(
    session: Session,
    organization_id: UUID,
    *,
    status: str = "ACTIVE",
    event_types: Sequence[str] = (),
    url: str = "https://127.0.0.1:9/hook",
    secret_sealed: bytes = b"not-a-real-sealed-secret",
    endpoint_id: UUID | None = None,
) -> UUID:
    """An endpoint row in the caller's transaction (intake and consumer tests never open its secret)."""
    endpoint_id = endpoint_id or uuid.uuid4()
    session.add(
        WebhookEndpoint(
            id=endpoint_id,
            organization_id=organization_id,
            url=url,
            event_types=list(event_types),
            status=status,
            secret_sealed=secret_sealed,
        )
    )
    session.flush()
    return endpoint_id


class Store:
    """Direct, committed access to the dispatcher's tables, as the HTTP use cases would leave them."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.engine = make_engine(settings.database_url, application_name="dps-webhooks-tests")
        self.tx = Transactions.for_engine(self.engine)
        self._sealer = SecretSealer(settings.secret_key)

    def close(self) -> None:
        self.tx.dispose()

    # setup

    def endpoint(
        self, url: str, *, status: str = "ACTIVE", organization_id: UUID | None = None, event_types: list[str] = ()
    ) -> tuple[UUID, str]:
        """A new endpoint; (its id, its whsec_ secret)."""
        endpoint_id, secret = uuid.uuid4(), new_signing_secret()
        with self.tx() as session:
            add_endpoint(
                session,
                organization_id or uuid.uuid4(),
                status=status,
                event_types=event_types,
                url=url,
                secret_sealed=self._sealer.seal(endpoint_id, secret),
                endpoint_id=endpoint_id,
            )
        return endpoint_id, secret

    def event(self, organization_id: UUID, event_type: str = "quote.approved", data: Any = None) -> IncomingEvent:
        """An api event accepted as the consumer would: one delivery per subscribed endpoint."""
        event = incoming(organization_id, event_type, data)
        with self.tx() as session:
            accept_event(session, event)
        return event

    def event_for(self, endpoint_id: UUID, **kwargs: Any) -> tuple[IncomingEvent, UUID]:
        """An event for the endpoint's organization; (the event, its delivery to that endpoint)."""
        event = self.event(self.endpoint_row(endpoint_id)["organization_id"], **kwargs)
        return event, self.delivery_of(event.id, endpoint_id)

    def test_delivery(self, endpoint_id: UUID) -> tuple[IncomingEvent, UUID]:
        """A test delivery (sent even while the endpoint is paused)."""
        event = incoming(self.endpoint_row(endpoint_id)["organization_id"], "webhook.test")
        with self.tx() as session:
            store_event(session, event)
            delivery = add_delivery(session, event, endpoint_id, is_test=True)
        return event, delivery.id

    # what the HTTP use cases do

    def set_status(self, endpoint_id: UUID, status: str) -> None:
        """Pause, resume or re-enable as the endpoint resource does: status, then hold or release."""
        with self.tx() as session:
            session.execute(update(WebhookEndpoint).where(WebhookEndpoint.id == endpoint_id).values(status=status))
            if status == "ACTIVE":
                release_held(session, endpoint_id)
            else:
                hold_pending(session, endpoint_id, keep_tests=status == "PAUSED")

    def rotate(self, endpoint_id: UUID) -> str:
        secret = new_signing_secret()
        with self.tx() as session:
            session.execute(
                update(WebhookEndpoint)
                .where(WebhookEndpoint.id == endpoint_id)
                .values(secret_sealed=self._sealer.seal(endpoint_id, secret))
            )
        return secret

    def sql(self, statement: str, **params: Any) -> None:
        with self.tx() as session:
            session.execute(text(statement), params)

    # inspection

    def delivery_of(self, event_id: UUID, endpoint_id: UUID) -> UUID:
        with self.tx.read() as session:
            return session.execute(
                select(WebhookDelivery.id).where(
                    WebhookDelivery.event_id == event_id, WebhookDelivery.endpoint_id == endpoint_id
                )
            ).scalar_one()

    def delivery_row(self, delivery_id: UUID) -> dict[str, Any]:
        with self.tx.read() as session:
            row = session.execute(select(WebhookDelivery.__table__).where(WebhookDelivery.id == delivery_id)).one()
            return dict(row._mapping)

    def endpoint_row(self, endpoint_id: UUID) -> dict[str, Any]:
        with self.tx.read() as session:
            row = session.execute(select(WebhookEndpoint.__table__).where(WebhookEndpoint.id == endpoint_id)).one()
            return dict(row._mapping)

    def attempts(self, delivery_id: UUID) -> list[dict[str, Any]]:
        with self.tx.read() as session:
            rows = session.execute(
                select(DeliveryAttempt.__table__)
                .where(DeliveryAttempt.delivery_id == delivery_id)
                .order_by(DeliveryAttempt.attempt)
            ).all()
            return [dict(row._mapping) for row in rows]

    def wait_until(self, check: Callable[[], Any], *, timeout: float = 60.0, what: str = "the condition") -> Any:
        """Poll ``check`` until it returns something truthy; AssertionError after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)

    def wait_for_status(self, delivery_id: UUID, *statuses: str, timeout: float = 60.0) -> dict[str, Any]:
        return self.wait_until(
            lambda: (row := self.delivery_row(delivery_id))["status"] in statuses and row,
            timeout=timeout,
            what=f"delivery {delivery_id} to be {' or '.join(statuses)}",
        )


@contextmanager
def running_worker(
    settings: Settings, *, before_start: Callable[[DeliveryWorker], Any] = lambda worker: None
) -> Iterator[DeliveryWorker]:
    """A delivery worker (no consumer) in a thread of this process; stopped and drained on exit.
    ``before_start`` is called with the worker before its loop runs (and polls for the first time)."""
    engine = make_engine(settings.database_url, application_name="dps-webhooks-test-worker")
    tx = Transactions.for_engine(engine)
    listen_url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    worker = DeliveryWorker(settings, tx, listen_url)
    before_start(worker)
    thread = threading.Thread(target=worker.run, name="test-delivery-worker", daemon=True)
    thread.start()
    try:
        yield worker
    finally:
        worker.stop()
        thread.join(timeout=60)
        tx.dispose()
        if thread.is_alive():
            raise AssertionError("the worker did not stop")
