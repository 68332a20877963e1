"""The idempotency use cases on a service's own ``idempotency_keys`` table: claim a key for a
request, then either keep its answer or release the key; replay a kept answer; purge expired keys.

Every step is a short transaction of its own, apart from the request's: the claim commits before
the request runs, so a concurrent retry sees it (409), and a claim whose process died mid-request
holds its key only until its lease ends. If the process dies between the request's commit and the
keeping of its answer, a retry after the lease runs the request again: the one window left, as in
any design that does not store the answer in the request's own transaction."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast
from uuid import UUID

from sqlalchemy import ColumnElement, CursorResult, Result, and_, delete, or_, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert

from dps_common.clock import utc_now
from dps_common.db import Transactions
from dps_common.idempotency.rules import (
    LEASE,
    RETENTION,
    RequestSignature,
    StoredResponse,
    in_progress,
    same_request,
)
from dps_common.idempotency.table import IDEMPOTENCY_KEYS as T
from dps_common.ids import new_id

log = logging.getLogger("dps.idempotency")
_ATTEMPTS = 3  # a claim meets a row that vanishes (its run released it) at most this often in a row
PURGE_BATCH = 500
_PRIMARY_KEY = ("organization_id", "client_key_id", "key")


@dataclass(frozen=True, slots=True)
class Claim:
    """A key held by one run of its request."""

    organization_id: UUID
    client_key_id: str  # the API key that sent the request: another key's same key is another request
    key: str
    claim_id: UUID


class IdempotencyStore:
    def __init__(self, tx: Transactions, now: Callable[[], datetime] = utc_now):
        self._tx = tx
        self._now = now

    def claim(
        self, organization_id: UUID, client_key_id: str, key: str, request: RequestSignature
    ) -> Claim | StoredResponse:
        """The claim to run ``request`` under ``key`` of the client ``client_key_id`` (the API key
        that sent it), or the answer kept for it (a replay).

        409 while another run of it holds the key; 422 when the key is bound to another request.
        An expired key, or a lapsed lease of the same request, is taken over."""
        for _ in range(_ATTEMPTS):
            claim = self._try_claim(Claim(organization_id, client_key_id, key, new_id()), request)
            if claim is not None:
                return claim
            row = self._find(organization_id, client_key_id, key)
            if row is None:
                continue  # released between the two statements: claim again
            same_request(RequestSignature(row.request_method, row.request_path, row.request_fingerprint), request)
            if row.response_status is None:
                raise in_progress()
            return StoredResponse(row.response_status, dict(row.response_headers or {}), bytes(row.response_body or b""))
        raise in_progress()

    def _try_claim(self, claim: Claim, request: RequestSignature) -> Claim | None:
        now = self._now()
        values: dict[str, Any] = {
            "organization_id": claim.organization_id,
            "client_key_id": claim.client_key_id,
            "key": claim.key,
            "claim_id": claim.claim_id,
            "request_method": request.method,
            "request_path": request.path,
            "request_fingerprint": request.fingerprint,
            "created_at": now,
            "expires_at": now + RETENTION,
            "locked_until": now + LEASE,
            "response_status": None,
            "response_headers": None,
            "response_body": None,
        }
        inserting = insert(T).values(values)
        new = inserting.excluded
        lapsed_run_of_same_request = and_(
            T.c.response_status.is_(None),
            T.c.locked_until <= now,
            T.c.request_method == new.request_method,
            T.c.request_path == new.request_path,
            T.c.request_fingerprint == new.request_fingerprint,
        )
        # Insert, or take over a row that no longer binds the key; otherwise leave it as it is.
        # Two claims racing on one key serialize on the row: the second re-checks the condition
        # against the first's row, finds it live, and returns nothing.
        statement = inserting.on_conflict_do_update(
            index_elements=[T.c.organization_id, T.c.client_key_id, T.c.key],
            set_={name: new[name] for name in values if name not in _PRIMARY_KEY},
            where=or_(T.c.expires_at <= now, lapsed_run_of_same_request),
        ).returning(T.c.claim_id)
        with self._tx() as session:
            taken = session.execute(statement).scalar_one_or_none()
        return claim if taken is not None else None

    def _find(self, organization_id: UUID, client_key_id: str, key: str) -> Any:
        query = select(T).where(
            T.c.organization_id == organization_id, T.c.client_key_id == client_key_id, T.c.key == key
        )
        with self._tx.read() as session:
            return session.execute(query).one_or_none()

    def keep(self, claim: Claim, response: StoredResponse) -> None:
        """Store the answer of the claim's run: from now on the key replays it."""
        statement = (
            update(T)
            .where(_held_by(claim))
            .values(
                locked_until=None,
                response_status=response.status,
                response_headers=response.headers,
                response_body=response.body,
            )
        )
        with self._tx() as session:
            if _rowcount(session.execute(statement)) == 0:
                # the lease ran out and a retry took the key over: its answer will be kept instead
                log.warning("idempotency claim lost before its answer was kept", extra={"organizationId": str(claim.organization_id)})

    def release(self, claim: Claim) -> None:
        """Forget the claim: the request left nothing to replay, and a retry runs it again."""
        statement = delete(T).where(_held_by(claim))
        with self._tx() as session:
            session.execute(statement)

    def purge_expired(self, limit: int = PURGE_BATCH) -> int:
        """Delete up to ``limit`` expired keys (rows another purge is deleting are skipped)."""
        expired = (
            select(T.c.organization_id, T.c.client_key_id, T.c.key)
            .where(T.c.expires_at <= self._now())
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        statement = delete(T).where(tuple_(T.c.organization_id, T.c.client_key_id, T.c.key).in_(expired))
        with self._tx() as session:
            return _rowcount(session.execute(statement))


def _held_by(claim: Claim) -> ColumnElement[bool]:
    return and_(
        T.c.organization_id == claim.organization_id,
        T.c.client_key_id == claim.client_key_id,
        T.c.key == claim.key,
        T.c.claim_id == claim.claim_id,
    )


def _rowcount(result: Result[Any]) -> int:
    return cast("CursorResult[Any]", result).rowcount
