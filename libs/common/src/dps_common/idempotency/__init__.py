"""Idempotent POSTs for every service that serves the external API (Stripe's design, and the IETF
draft "The Idempotency-Key HTTP Header Field"): a POST sent with an ``Idempotency-Key`` header runs
once per client (the organization and the API key that sent it, as in the draft) and key; its
answer is kept for 24 hours and replayed, marked ``Idempotent-Replayed: true``, to a retry of the
same request (method, path, body fingerprint). The same key with another request is 422, a retry
while the first still runs is 409. A secret in the answer is shown once: the kept answer holds it
as null with a ``secretShownOnce`` notice, never the secret.

- ``rules``: key validation, the body fingerprint, which answers are kept (plain functions);
- ``store``: claim, keep, release, replay and purge on the service's own table;
- ``redaction``: the answer with its secret fields set to null and the notice, as it is kept;
- ``table`` / ``migration``: ``idempotency_table(Base.metadata)`` on a service's metadata and
  ``create_idempotency_keys(op)`` / ``drop_idempotency_keys(op)`` in its Alembic migration;
- ``dps_common.http.idempotency``: the Falcon middleware that applies them to keyed POSTs."""

from dps_common.idempotency.store import Claim, IdempotencyStore
from dps_common.idempotency.table import idempotency_table

__all__ = ["Claim", "IdempotencyStore", "idempotency_table"]
