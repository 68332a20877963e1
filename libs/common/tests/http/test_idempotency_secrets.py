"""An answer that carries a secret (an operation's ``secret_fields``) is never kept with its secret:
the first answer shows it, the row in ``idempotency_keys`` holds the answer with the secret set to
null and a ``secretShownOnce`` notice, and a retry replays that (the secret is shown once). Against a
real PostgreSQL, on a small Falcon app whose resource issues a new secret per run."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any
from uuid import UUID, uuid4

import falcon
import falcon.testing
import orjson
import pytest
from alembic.migration import MigrationContext
from alembic.operations import Operations
from pydantic import BaseModel
from sqlalchemy import create_engine, inspect, select, text

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.db import Transactions, new_metadata, sqlalchemy_url
from dps_common.http import problems
from dps_common.http.bodies import parse_body
from dps_common.http.idempotency import IdempotencyMiddleware
from dps_common.http.operations import Operation
from dps_common.idempotency import IdempotencyStore, idempotency_table
from dps_common.idempotency.migration import create_idempotency_keys, scope_idempotency_keys_by_client
from dps_common.idempotency.redaction import NOTICE_FIELD, redacted
from dps_testing.migrations import migrated
from dps_testing.services import fresh_database
from dps_testing.transactions import committed

KEYS = idempotency_table(new_metadata())
RENEWAL = "POST /signing-keys/{id}/rotate"



@pytest.fixture(scope="module")
def tx() -> Iterator[Transactions]:
    with (
        fresh_database("dps_idempotency_secrets") as url,
        migrated(url, create_idempotency_keys),
        migrated(url, scope_idempotency_keys_by_client),
        committed(url, "dps-idempotency-secrets") as tx,
    ):
        yield tx


class SigningKeyCreate(BaseModel):
    name: str


class AsOrganization:
    def process_resource(self, req: falcon.Request, resp: falcon.Response, resource: object, params: dict[str, Any]) -> None:
        req.context.principal = Principal(UUID(req.get_header("x-org")), "Org", uuid4(), Role.ADMIN, "key")


class SigningKeys:
    """``POST /signing-keys``: a new key per run, its secret in the answer (shown once); a name
    ``missing`` is 404 (an answer of the operation's own rules, kept: it carries no secret)."""

    operations = {
        "POST": Operation(
            summary="Create a signing key.",
            scope=None,
            body=SigningKeyCreate,
            status=201,
            secret_fields=("secret", "previousSecret"),
            secret_renewal=RENEWAL,
        )
    }

    def __init__(self) -> None:
        self.issued: list[str] = []

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = parse_body(req, SigningKeyCreate)
        if body.name == "missing":
            raise falcon.HTTPNotFound()
        self.issued.append(secrets.token_urlsafe(24))
        resp.status = 201
        resp.media = {"id": f"sk_{len(self.issued)}", "name": body.name, "secret": self.issued[-1], "previousSecret": None}


@pytest.fixture
def keys() -> SigningKeys:
    return SigningKeys()


@pytest.fixture
def client(tx: Transactions, keys: SigningKeys) -> falcon.testing.TestClient:
    app = falcon.App(middleware=[AsOrganization(), IdempotencyMiddleware(IdempotencyStore(tx))])
    problems.install(app)
    app.add_route("/signing-keys", keys)
    return falcon.testing.TestClient(app)


def post(client: falcon.testing.TestClient, org: UUID, key: str, name: str = "a") -> falcon.testing.Result:
    return client.simulate_post("/signing-keys", json={"name": name}, headers={"x-org": str(org), "Idempotency-Key": key})


def stored_rows(tx: Transactions, org: UUID) -> list[Any]:
    with tx.read() as session:
        return list(session.execute(select(KEYS).where(KEYS.c.organization_id == org)))


def test_the_first_answer_shows_the_secret_and_a_replay_never_does(client, keys, tx):
    org = uuid4()
    first = post(client, org, "create-1")
    assert first.status_code == 201 and first.json["secret"] == keys.issued[0]
    assert NOTICE_FIELD not in first.json

    retry = post(client, org, "create-1")
    assert retry.status_code == 201 and retry.headers["Idempotent-Replayed"] == "true"
    assert keys.issued[0] not in retry.text
    assert retry.json == {
        "id": "sk_1",
        "name": "a",
        "secret": None,
        "previousSecret": None,
        NOTICE_FIELD: {
            "fields": ["secret"],
            "detail": retry.json[NOTICE_FIELD]["detail"],
            "renewal": "POST /signing-keys/sk_1/rotate",
        },
    }
    detail = retry.json[NOTICE_FIELD]["detail"]
    assert "shown once" in detail and "POST /signing-keys/sk_1/rotate" in detail
    assert len(keys.issued) == 1  # the replay ran nothing


def test_the_kept_row_never_holds_the_secret(client, keys, tx):
    org = uuid4()
    assert post(client, org, "create-2").status_code == 201
    [row] = stored_rows(tx, org)
    secret = keys.issued[0].encode()
    assert secret not in bytes(row.response_body)
    assert secret not in orjson.dumps(row.response_headers)
    assert orjson.loads(row.response_body)["secret"] is None


def test_an_answer_without_the_secret_is_kept_as_it_is(client, keys, tx):
    org = uuid4()
    first = post(client, org, "missing-1", name="missing")
    retry = post(client, org, "missing-1", name="missing")
    assert first.status_code == retry.status_code == 404
    assert retry.headers["Idempotent-Replayed"] == "true" and retry.json == first.json
    assert NOTICE_FIELD not in retry.json


def test_redacted_leaves_out_what_it_cannot_read():
    fields, renewal = ("secret",), "POST /things/{id}/rotate"
    assert redacted(b"", fields, renewal) == b""  # nothing to hide
    assert redacted(b"whsec_plain", fields, renewal) is None  # not JSON: not kept at all
    assert redacted(b"[1]", fields, renewal) is None
    assert redacted(b'{"id": "t1"}', fields, renewal) == b'{"id": "t1"}'  # no secret in it
    without_id = orjson.loads(redacted(b'{"secret": "s3cr3t"}', fields, renewal) or b"")
    assert without_id["secret"] is None and without_id[NOTICE_FIELD]["renewal"] == renewal
    no_renewal = orjson.loads(redacted(b'{"secret": "s3cr3t"}', fields, "") or b"")
    assert no_renewal[NOTICE_FIELD]["renewal"] is None and "s3cr3t" not in no_renewal[NOTICE_FIELD]["detail"]


def test_scoping_by_client_deletes_the_answers_kept_before_secrets_included():
    """The migration to per-client keys: the rows kept before (their client unknown, and an answer
    with a secret kept in plaintext) are deleted, and the primary key takes the client."""
    with fresh_database("dps_idempotency_scope") as url, migrated(url, create_idempotency_keys):
        engine = create_engine(sqlalchemy_url(url))
        try:
            with engine.begin() as connection:
                connection.execute(
                    text(
                        "INSERT INTO idempotency_keys (organization_id, key, claim_id, request_method, request_path, "
                        "request_fingerprint, created_at, expires_at, response_status, response_body) VALUES "
                        "(gen_random_uuid(), 'k', gen_random_uuid(), 'POST', '/webhook-configs', 'f', now(), "
                        "now() + interval '1 day', 201, convert_to('{\"secret\": \"whsec_old\"}', 'UTF8'))"
                    )
                )
            with engine.begin() as connection:
                scope_idempotency_keys_by_client(Operations(MigrationContext.configure(connection)))
            with engine.connect() as connection:
                assert connection.execute(text("SELECT count(*) FROM idempotency_keys")).scalar_one() == 0
            primary_key = inspect(engine).get_pk_constraint("idempotency_keys")
            assert primary_key["constrained_columns"] == ["organization_id", "client_key_id", "key"]
        finally:
            engine.dispose()
