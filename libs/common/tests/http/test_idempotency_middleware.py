"""The ``Idempotency-Key`` middleware and its store against a real PostgreSQL (a fresh database whose
table the migration helper made), on a small Falcon app whose resource counts its runs and can be
held mid-request: a retry while the first runs is 409 (two threads), a lapsed lease is taken over,
a 5xx releases the key, a refused body claims nothing, expired keys are purged on the way out.
The services' own suites hold the same rules on their real operations."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import falcon
import falcon.testing
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from pydantic import BaseModel
from sqlalchemy import create_engine, func, inspect, select, update

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.db import Transactions, new_metadata, sqlalchemy_url
from dps_common.http import problems
from dps_common.http.bodies import parse_body
from dps_common.http.idempotency import IdempotencyMiddleware
from dps_common.http.operations import Operation
from dps_common.idempotency import IdempotencyStore, idempotency_table
from dps_common.idempotency.migration import (
    create_idempotency_keys,
    drop_idempotency_keys,
    scope_idempotency_keys_by_client,
    unscope_idempotency_keys_by_client,
)
from dps_common.idempotency.rules import LEASE, RequestSignature, StoredResponse, body_fingerprint
from dps_common.json import dumps
from dps_testing.migrations import migrated
from dps_testing.services import fresh_database
from dps_testing.transactions import committed

KEYS = idempotency_table(new_metadata())
WAIT_SECONDS = 30



@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with (
        fresh_database("dps_idempotency_test") as url,
        migrated(url, create_idempotency_keys),
        migrated(url, scope_idempotency_keys_by_client),
    ):
        yield url


@pytest.fixture(scope="module")
def tx(database_url: str) -> Iterator[Transactions]:
    with committed(database_url, "dps-idempotency-test") as tx:
        yield tx


class Item(BaseModel):
    name: str


class AsOrganization:
    """Stands in for the auth middleware: the principal of the organization named in ``x-org``, its
    API key's id from ``x-client`` (``key`` by default)."""

    def process_resource(self, req: falcon.Request, resp: falcon.Response, resource: object, params: dict[str, Any]) -> None:
        if req.get_header("x-org"):
            client = req.get_header("x-client") or "key"  # the API key's id (principal.key_id)
            req.context.principal = Principal(UUID(req.get_header("x-org")), "Org", uuid4(), Role.ADMIN, client)


class Items:
    """``POST /items``: creates an item per run (counted); ``hold`` keeps a run waiting mid-request,
    ``fail`` makes it answer 500 once."""

    operations = {"POST": Operation(summary="Create an item.", scope=None, body=Item, status=201)}

    def __init__(self) -> None:
        self.runs = 0
        self.started = threading.Event()
        self.hold: threading.Event | None = None
        self.fail = False

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        item = parse_body(req, Item)
        self.runs += 1
        self.started.set()
        if self.hold is not None:
            assert self.hold.wait(WAIT_SECONDS)
        if self.fail:
            self.fail = False
            raise RuntimeError("boom")
        resp.status = 201
        resp.media = {"run": self.runs, "name": item.name}


@pytest.fixture
def items() -> Items:
    return Items()


@pytest.fixture
def store(tx: Transactions) -> IdempotencyStore:
    return IdempotencyStore(tx)


def make_client(store: IdempotencyStore, items: Items, **options: Any) -> falcon.testing.TestClient:
    app = falcon.App(middleware=[AsOrganization(), IdempotencyMiddleware(store, **options)])
    problems.install(app)
    app.add_route("/items", items)
    return falcon.testing.TestClient(app)


@pytest.fixture
def client(store: IdempotencyStore, items: Items) -> falcon.testing.TestClient:
    return make_client(store, items)


def post(client: falcon.testing.TestClient, org: UUID, key: str, body: Any = None, **kwargs: Any) -> falcon.testing.Result:
    headers = {"x-org": str(org), "Idempotency-Key": key, **kwargs.pop("headers", {})}
    return client.simulate_post("/items", json={"name": "a"} if body is None else body, headers=headers, **kwargs)


def rows(tx: Transactions, org: UUID) -> list[Any]:
    with tx.read() as session:
        return list(session.execute(select(KEYS).where(KEYS.c.organization_id == org)))


def test_the_migration_helper_makes_the_table_the_factory_describes(database_url):
    engine = create_engine(sqlalchemy_url(database_url))
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, KEYS.metadata) == []
    finally:
        engine.dispose()


def test_a_retry_while_the_first_runs_is_409_then_the_answer_is_replayed(client, items, tx):
    org = uuid4()
    items.hold = threading.Event()
    first: dict[str, falcon.testing.Result] = {}
    runner = threading.Thread(target=lambda: first.setdefault("resp", post(client, org, "k1")))
    runner.start()
    try:
        assert items.started.wait(WAIT_SECONDS)
        retry = post(client, org, "k1")
        assert retry.status_code == 409, retry.text
        assert retry.headers["content-type"] == "application/problem+json"
        assert retry.json["code"] == "idempotency_key_in_use"
        assert [row.response_status for row in rows(tx, org)] == [None]  # claimed, not answered
    finally:
        items.hold.set()
        runner.join(WAIT_SECONDS)
    assert first["resp"].status_code == 201 and "Idempotent-Replayed" not in first["resp"].headers
    replay = post(client, org, "k1")
    assert (replay.status_code, replay.json) == (201, {"run": 1, "name": "a"})
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert items.runs == 1


def test_a_lapsed_lease_lets_a_retry_run_the_request_again_but_not_another_request(client, items, tx, store):
    org = uuid4()
    claim = store.claim(org, "key", "k2", _signature({"name": "a"}))  # a run whose process then died
    assert post(client, org, "k2").status_code == 409
    with tx() as session:
        session.execute(update(KEYS).where(KEYS.c.organization_id == org).values(locked_until=datetime.now(UTC) - timedelta(seconds=1)))
    assert post(client, org, "k2", {"name": "b"}).status_code == 422  # the key is still bound to its request
    taken_over = post(client, org, "k2")
    assert taken_over.status_code == 201 and items.runs == 1
    store.keep(claim, _stored())  # the dead run's late answer does not overwrite the new one
    assert post(client, org, "k2").json == {"run": 1, "name": "a"}


def test_keys_are_per_client_another_api_key_of_the_organization_runs_its_own_request(client, items, tx):
    org = uuid4()
    first = post(client, org, "shared", headers={"x-client": "key-a"})
    other = post(client, org, "shared", headers={"x-client": "key-b"})  # same key, same body, another client
    assert (first.status_code, first.json) == (201, {"run": 1, "name": "a"})
    assert (other.status_code, other.json) == (201, {"run": 2, "name": "a"})
    assert "Idempotent-Replayed" not in other.headers
    for client_key_id, run in (("key-a", 1), ("key-b", 2)):  # each client's retry replays its own answer
        retry = post(client, org, "shared", headers={"x-client": client_key_id})
        assert retry.headers["Idempotent-Replayed"] == "true" and retry.json["run"] == run
    assert items.runs == 2
    assert sorted(row.client_key_id for row in rows(tx, org)) == ["key-a", "key-b"]
    assert post(client, org, "shared", {"name": "b"}, headers={"x-client": "key-b"}).status_code == 422


def _signature(body: dict[str, Any]) -> RequestSignature:
    return RequestSignature("POST", "/items", body_fingerprint(dumps(body)))


def _stored() -> StoredResponse:
    return StoredResponse(200, {"Content-Type": "application/json"}, b'{"late": true}')


def test_a_server_error_releases_the_key_so_a_retry_runs_again(client, items, tx):
    org = uuid4()
    items.fail = True
    assert post(client, org, "k3").status_code == 500
    assert rows(tx, org) == []
    again = post(client, org, "k3")
    assert again.status_code == 201 and again.json["run"] == 2
    assert "Idempotent-Replayed" not in again.headers


def test_a_body_refused_before_execution_claims_nothing(client, items, tx):
    org = uuid4()
    assert post(client, org, "k4", {"name": 5}).status_code == 400  # schema: wrong type
    headers = {"x-org": str(org), "Idempotency-Key": "k4"}
    as_text = client.simulate_post("/items", body=b'{"name":"a"}', headers={**headers, "Content-Type": "text/plain"})
    assert as_text.status_code == 415
    malformed = client.simulate_post("/items", body=b'{"name":', headers={**headers, "Content-Type": "application/json"})
    assert malformed.status_code == 400 and malformed.json["code"] == "malformed_json"
    assert rows(tx, org) == [] and items.runs == 0
    fixed = post(client, org, "k4", {"name": "fixed"})  # the key is free for the corrected request
    assert fixed.status_code == 201 and fixed.json["name"] == "fixed"


def test_the_body_the_resource_reads_is_the_body_sent_also_when_chunked(client, items):
    org = uuid4()
    resp = client.simulate_post(
        "/items",
        body=b'{"name": "chunked"}',
        headers={"x-org": str(org), "Idempotency-Key": "k5", "Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )
    assert resp.status_code == 201 and resp.json["name"] == "chunked"


def test_an_oversized_body_is_413_before_any_claim(client, items, tx):
    org = uuid4()
    resp = client.simulate_post(
        "/items",
        body=b"x",
        headers={"x-org": str(org), "Idempotency-Key": "k6", "Content-Type": "application/json", "Content-Length": str(11 * 1024 * 1024)},
    )
    assert resp.status_code == 413
    assert rows(tx, org) == []


def test_requests_without_a_principal_or_key_are_left_alone(client, items, tx):
    org = uuid4()
    assert client.simulate_post("/items", json={"name": "a"}, headers={"Idempotency-Key": "k7"}).status_code == 201
    assert client.simulate_post("/items", json={"name": "a"}, headers={"x-org": str(org)}).status_code == 201
    assert rows(tx, org) == [] and items.runs == 2


def test_expired_keys_are_purged_on_the_way_out_and_live_ones_kept(store, items, tx):
    org = uuid4()
    client = make_client(store, items, purge_chance=1.0)
    for key in ("old-1", "old-2", "live"):
        assert post(client, org, key).status_code == 201
    with tx() as session:
        session.execute(
            update(KEYS)
            .where(KEYS.c.organization_id == org, KEYS.c.key.like("old-%"))
            .values(expires_at=datetime.now(UTC) - LEASE)
        )
    assert post(client, uuid4(), "another").status_code == 201  # any kept answer may purge
    assert [row.key for row in rows(tx, org)] == ["live"]


def test_purge_deletes_a_bounded_batch(store, tx):
    org = uuid4()
    for n in range(5):
        store.claim(org, "key", f"p{n}", _signature({"n": n}))
    with tx() as session:
        session.execute(update(KEYS).where(KEYS.c.organization_id == org).values(expires_at=datetime.now(UTC) - LEASE))
    assert store.purge_expired(limit=3) == 3
    with tx.read() as session:
        left = session.scalar(select(func.count()).select_from(KEYS).where(KEYS.c.organization_id == org))
    assert left == 2
    assert store.purge_expired(limit=3) == 2


def test_the_downgrade_helpers_remove_the_table():
    with fresh_database("dps_idempotency_down") as url:
        with (
            migrated(url, create_idempotency_keys),
            migrated(url, scope_idempotency_keys_by_client),
            migrated(url, unscope_idempotency_keys_by_client),
            migrated(url, drop_idempotency_keys),
        ):
            engine = create_engine(sqlalchemy_url(url))
            try:
                assert inspect(engine).get_table_names() == []
            finally:
                engine.dispose()
