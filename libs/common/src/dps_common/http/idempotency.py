"""``Idempotency-Key`` on every keyed POST: the Falcon side of ``dps_common.idempotency``.

Added after the auth middleware (``app.add_middleware``), so a request refused for its key or
scope (401, 403) never claims a key. Before the responder runs, the middleware checks the key
(400), reads the body once (413) and validates it against the operation's body model (400, 415):
a request refused before execution keeps nothing, as with Stripe. It then claims the key for the
client: a first request runs and its answer is kept (``rules.is_kept``) or the key released;
a retry of the same request gets the kept answer with ``Idempotent-Replayed: true``; another
request under the key is 422, a retry while the first still runs 409. Keys are scoped to the client:
the organization and the API key that sent the request (``principal.key_id``, as in the IETF draft).
An operation's ``secret_fields`` are never kept: the kept answer holds them as null, with a
``secretShownOnce`` notice (``dps_common.idempotency.redaction``), so a replay shows no secret.
Now and then (``purge_chance`` of the answers kept) a bounded batch of expired keys is deleted on
the way out."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Any

import falcon

from dps_common.http.bodies import parse_body, read_body
from dps_common.http.operations import Operation
from dps_common.idempotency.redaction import redacted
from dps_common.idempotency.rules import (
    KEPT_HEADERS,
    KEY_HEADER,
    REPLAYED_HEADER,
    RequestSignature,
    StoredResponse,
    body_fingerprint,
    is_kept,
    valid_key,
)
from dps_common.idempotency.store import Claim, IdempotencyStore

log = logging.getLogger("dps.idempotency")
PURGE_CHANCE = 0.01


class IdempotencyMiddleware:
    def __init__(
        self,
        store: IdempotencyStore,
        *,
        purge_chance: float = PURGE_CHANCE,
        draw: Callable[[], float] = random.random,
    ):
        self._store = store
        self._purge_chance = purge_chance
        self._draw = draw

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: object, params: dict[str, Any]
    ) -> None:
        if req.method != "POST" or resource is None or getattr(resource, "public", False):
            return
        operation = getattr(resource, "operations", {}).get("POST")
        given = req.get_header(KEY_HEADER)
        principal = req.context.get("principal")
        if given is None or operation is None or principal is None:
            return
        key = valid_key(given)
        body = read_body(req)  # kept on the request: the responder reads the same bytes
        if operation.body is not None and (operation.body_required or body or req.content_type is not None):
            parse_body(req, operation.body)  # refused here (400, 415): nothing to keep, no claim
        path = f"{req.path}?{req.query_string}" if req.query_string else req.path
        outcome = self._store.claim(
            principal.organization_id, principal.key_id, key, RequestSignature("POST", path, body_fingerprint(body))
        )
        if isinstance(outcome, Claim):
            req.context.idempotency_claim = outcome
            req.context.idempotency_operation = operation
            return
        _replay(resp, outcome)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        claim: Claim | None = req.context.get("idempotency_claim")
        if claim is None:
            return
        try:
            answer = _answer(resp, req.context.idempotency_operation)
            if answer is not None:
                self._store.keep(claim, answer)
                if self._draw() < self._purge_chance:
                    self._store.purge_expired()
            else:
                self._store.release(claim)
        except Exception:
            # the answer stands (its work is done); the key stays claimed until its lease ends
            log.exception("idempotency key not updated", extra={"requestId": req.context.get("request_id")})


def _answer(resp: falcon.Response, operation: Operation) -> StoredResponse | None:
    """What is kept of the answer: ``None`` when it is not kept (``rules.is_kept``, a streamed
    body, or a body that may hold a secret and cannot be redacted); never a secret."""
    if not is_kept(resp.status_code) or resp.stream is not None:
        return None
    body = bytes(resp.render_body() or b"")  # serializes resp.media once; Falcon sends the same bytes
    if operation.secret_fields:
        kept = redacted(body, operation.secret_fields, operation.secret_renewal)
        if kept is None:
            return None
        body = kept
    headers = {name: value for name in KEPT_HEADERS if (value := resp.get_header(name)) is not None}
    if resp.content_type and "Content-Type" not in headers:
        headers["Content-Type"] = resp.content_type
    return StoredResponse(resp.status_code, headers, body)


def _replay(resp: falcon.Response, answer: StoredResponse) -> None:
    resp.status = answer.status
    for name, value in answer.headers.items():
        resp.set_header(name, value)
    resp.set_header(REPLAYED_HEADER, "true")
    resp.data = answer.body
    resp.complete = True  # the responder does not run
