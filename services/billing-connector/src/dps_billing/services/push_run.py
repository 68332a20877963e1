"""One push, from a claim to its end: plan, then create each supported line's product and price (a few
lines at once, ``dps_billing.services.push_lines``), then the draft quote, storing every id as soon as it is
returned.

- The plan comes from the snapshot stored with the push and the ``planned_at`` of its first claim,
  so every resume asks for exactly the same objects with the same parameters. A plan with errors
  (a platform limit, nothing supported, ...) fails the push before anything is created.
- Each create carries ``Idempotency-Key: {push}:{line}:{kind}`` (``{push}:quote:quote`` for the
  quote; ``:{generation}`` appended from the second generation on). An object whose id is stored is
  skipped. An intent without an id is re-sent with its key while the platform still remembers keys;
  once it is older than ``KEYS_TRUSTED_FOR`` (the platform forgets after 24 h) the object is looked
  up on the platform first, and only made anew, under a new generation's key, when it is not there.
- A 401 refreshes the token once and repeats the call. Transient failures are retried by the client;
  when its budget runs out the push is queued again for later (up to ``MAX_CLAIMS`` claims). Any
  other refusal ends the push ``failed`` with the platform's message and ``param``.

The id of the request that queued the push (``billing_pushes.request_id``) is bound while it runs, on
its lease renewer and its line threads too: every line about the push carries it as ``requestId``, and
the ``billing.*`` event it ends with keeps it in the outbox (published as ``X-Request-Id``).
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar
from uuid import UUID

import stripe

from dps_common import request_id
from dps_common.db import Transactions
from dps_common.errors import Conflict

from dps_billing.adapters.billing_platform.client import BillingClient, Created
from dps_billing.adapters.billing_platform.errors import PlatformError, PlatformUnauthorized, PlatformUnavailable
from dps_billing.adapters.billing_platform.lookups import PlatformLookups
from dps_billing.adapters.billing_platform.pacing import Pacer
from dps_billing.adapters.billing_platform.postgres_pacer import for_claim
from dps_billing.adapters.billing_platform.retry import Retrier
from dps_billing.db.models import PushObject
from dps_billing.db.push_claims import release, renew_lease
from dps_billing.domain.claimed_push import ClaimedPush
from dps_billing.domain.mapping import plan_push
from dps_billing.domain.plan import PlannedLine, PushPlan
from dps_billing.domain.quote_snapshot import QuoteSnapshot, SnapshotError
from dps_billing.services.access import Access, AccessTokens
from dps_billing.services.ports import Outbox
from dps_billing.services.push_lines import TurnOrder, create_lines
from dps_billing.services.push_progress import Failure, PushProgress
from dps_billing.settings import Settings

log = logging.getLogger("dps.billing.worker")
T = TypeVar("T")
KEYS_TRUSTED_FOR = timedelta(hours=23)  # the platform keeps idempotency keys 24 h: an hour of margin
MAX_CLAIMS = 8  # claims of one push before transient failures end it
QUOTE_LINE = ""  # the line id of the billing quote's row


class LeaseLost(Exception):
    """Another worker holds the push now: stop without writing its outcome."""


class Stopping(Exception):
    """The worker is stopping: the push is given back, queued, for any worker to resume."""


def idempotency_key(push_id: UUID, line_id: str, kind: str, generation: int) -> str:
    base = f"{push_id}:{line_id or 'quote'}:{kind}"
    return f"{base}:{generation}" if generation else base


def review_url(settings: Settings, quote_id: str, livemode: bool) -> str:
    return f"{settings.billing_dashboard_url}/{'' if livemode else 'test/'}quotes/{quote_id}"


@dataclass
class _Lease:
    push: ClaimedPush
    lost: threading.Event


class PushRunner:
    def __init__(self, settings: Settings, tx: Transactions, tokens: AccessTokens, pacer: Pacer,
                 http_client: stripe.HTTPClient, now: Callable[[], datetime], outbox: Outbox,
                 retrier: Retrier | None = None, stopping: threading.Event | None = None):
        self.stopping = stopping or threading.Event()
        self._settings = settings
        self._tx = tx
        self._tokens = tokens
        self._pacer = pacer
        self._http_client = http_client
        self._retrier = retrier or Retrier()
        self._records = PushProgress(tx, now, outbox)
        self._now = now

    def run(self, push: ClaimedPush) -> None:
        # the pacer's turns are the claim's: if this worker dies mid-call, they end with its lease
        with request_id.bound(push.request_id), for_claim(push.push_id, push.token):
            self._run_bound(push)

    def _run_bound(self, push: ClaimedPush) -> None:
        lease = _Lease(push, threading.Event())
        stop_renewing = threading.Event()
        renewer = threading.Thread(target=contextvars.copy_context().run, args=(self._renew, lease, stop_renewing),
                                   daemon=True, name=f"lease-{push.push_id}")
        renewer.start()
        try:
            self._run(lease)
        except LeaseLost:
            log.warning("push lease lost", extra={"pushId": str(push.push_id)})
        except Stopping:
            with self._tx() as session:
                release(session, push.push_id, push.token)
            log.info("push given back", extra={"pushId": str(push.push_id)})
        finally:
            stop_renewing.set()
            renewer.join()

    def _renew(self, lease: _Lease, stop: threading.Event) -> None:
        seconds = self._settings.push_lease_seconds
        while not stop.wait(seconds / 3):
            try:
                with self._tx() as session:
                    held = renew_lease(session, lease.push.push_id, lease.push.token, seconds)
            except Exception:  # the database is away for a moment: the next renewal may succeed
                log.exception("push lease renewal failed", extra={"pushId": str(lease.push.push_id)})
                continue
            if not held:
                lease.lost.set()
                return

    def _run(self, lease: _Lease) -> None:
        push = lease.push
        try:
            quote = QuoteSnapshot.from_json(push.snapshot)
        except SnapshotError as exc:
            self._fail(push, Failure("quote_snapshot_invalid", f"the stored quote cannot be read: {exc}"))
            return
        plan = plan_push(quote, push.planned_at)
        self._records.planned(push.push_id, len(plan.lines), [
            {"code": w.code.value, "lineId": w.line_id, "message": w.message} for w in plan.warnings
        ])
        if plan.blocked or plan.quote is None:
            first = plan.errors[0]
            message = "; ".join(error.message for error in plan.errors)
            self._fail(push, Failure(first.code.value, message, first.limit))
            return
        try:
            access = self._tokens.current(push.organization_id)
        except Conflict as exc:
            self._fail(push, Failure(exc.code, exc.detail))
            return
        calls = _Calls(self, lease, access)
        try:
            billing_quote_id = self._create_all(calls, plan, str(quote.id))
        except PlatformUnavailable as exc:
            self._later(push, Failure(exc.code or "platform_unavailable", exc.message, exc.param), exc.retry_after)
            return
        except PlatformError as exc:
            self._fail(push, Failure(exc.code or "platform_error", exc.message, exc.param))
            return
        except Conflict as exc:  # the connection was removed or broke meanwhile
            self._fail(push, Failure(exc.code, exc.detail))
            return
        url = review_url(self._settings, billing_quote_id, calls.access.livemode)
        if self._records.succeed(push.push_id, push.token, url):
            log.info("billing push succeeded", extra={"pushId": str(push.push_id), "billingQuoteId": billing_quote_id})

    def _create_all(self, calls: _Calls, plan: PushPlan, pricing_quote_id: str) -> str:
        assert plan.quote is not None
        objects = self._records.objects(calls.lease.push.push_id)
        known = self._records.is_known

        def create_line(position: int, line: PlannedLine, order: TurnOrder) -> str:
            """The line's price id (its product made first)."""
            with order.step("price", position) as price_pacer:
                with order.step("product", position) as product_pacer:
                    product_id = calls.ensure(
                        objects, line.line_id, "product", position,
                        lambda key: calls.client(product_pacer).create_product(line.product, idempotency_key=key),
                        lambda since: calls.lookups(product_pacer).find_product(line.line_id, since, known),
                    )
                return calls.ensure(
                    objects, line.line_id, "price", position,
                    lambda key: calls.client(price_pacer).create_price(line.price, product_id=product_id,
                                                                       idempotency_key=key),
                    lambda since: calls.lookups(price_pacer).find_price(product_id, since, known),
                )

        prices = create_lines(plan.lines, self._pacer, create_line)
        price_ids = {line.line_id: price_id for line, price_id in zip(plan.lines, prices)}
        quote = plan.quote
        return calls.ensure(
            objects, QUOTE_LINE, "quote", len(plan.lines),
            lambda key: calls.client().create_quote(quote, price_ids=price_ids, idempotency_key=key),
            lambda since: calls.lookups().find_quote(pricing_quote_id, since, known),
        )

    def _fail(self, push: ClaimedPush, failure: Failure) -> None:
        if self._records.fail(push.push_id, push.token, failure):
            log.warning("billing push failed", extra={"pushId": str(push.push_id), "code": failure.code})

    def _later(self, push: ClaimedPush, failure: Failure, retry_after: float | None) -> None:
        if push.claims >= MAX_CLAIMS:
            self._fail(push, failure)
            return
        delay = timedelta(seconds=max(retry_after or 0.0, min(300.0, 5.0 * 2 ** push.claims)))
        if self._records.retry_later(push.push_id, push.token, delay, failure):
            log.warning("billing push postponed", extra={"pushId": str(push.push_id), "code": failure.code})


class _Calls:
    """The platform calls of one push run: its token (refreshed after a 401), lease checks, records."""

    def __init__(self, runner: PushRunner, lease: _Lease, access: Access):
        self.runner = runner
        self.lease = lease
        self.access = access

    def client(self, pacer: Pacer | None = None) -> BillingClient:
        r = self.runner
        return BillingClient(self.access.access_token, self.access.account_id, api_url=r._settings.billing_api_url,
                             http_client=r._http_client, pacer=pacer or r._pacer, retrier=r._retrier)

    def lookups(self, pacer: Pacer | None = None) -> PlatformLookups:
        r = self.runner
        return PlatformLookups(self.access.access_token, self.access.account_id, api_url=r._settings.billing_api_url,
                               http_client=r._http_client, pacer=pacer or r._pacer, retrier=r._retrier)

    def authorized(self, call: Callable[[], T]) -> T:
        if self.lease.lost.is_set():
            raise LeaseLost()
        if self.runner.stopping.is_set():
            raise Stopping()
        try:
            return call()
        except PlatformUnauthorized:
            organization_id = self.lease.push.organization_id
            self.access = self.runner._tokens.after_unauthorized(organization_id, self.access.access_token)
            return call()

    def ensure(self, objects: dict[tuple[str, str], PushObject], line_id: str, kind: str, position: int,
               create: Callable[[str], Created], find: Callable[[int], str | None]) -> str:
        """The object's platform id: stored, found after a lost answer, or created now."""
        push_id = self.lease.push.push_id
        records = self.runner._records
        row = objects.get((line_id, kind))
        if row is not None and row.platform_id is not None:
            return row.platform_id
        if row is None:
            row = records.intend(push_id, line_id, kind, position, 0, idempotency_key(push_id, line_id, kind, 0))
        elif self.runner._now() - row.sent_at > KEYS_TRUSTED_FOR:
            since = int(row.sent_at.timestamp())
            found = self.authorized(lambda: find(since))
            if found is not None:
                records.created(row, found)
                log.info("push object found", extra={"pushId": str(push_id), "kind": kind})
                return found
            generation = row.generation + 1
            row = records.intend(push_id, line_id, kind, position, generation,
                                 idempotency_key(push_id, line_id, kind, generation))
        objects[(line_id, kind)] = row
        key = row.idempotency_key
        created = self.authorized(lambda: create(key))
        records.created(row, created.id)
        return created.id
