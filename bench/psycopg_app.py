"""The floor for ``GET /products``: a minimal hand-written handler over plain psycopg.

Runs the api's first-page query as plain SQL (the same columns and expressions, the same rows:
the organization's first ``limit + 1`` by id, admin view with inactive products and cost) and
renders the same JSON body with the same library, orjson. Like the api, it passes the JSONB columns
through as their text (``::text`` + ``orjson.Fragment``), so the two differ only in the layers above
the query: Falcon middleware, authentication, SQLAlchemy, the session and transaction, the cursor.
bench/run.py checks that both return the same items. No middleware, no auth, no ORM. Autocommit
psycopg connections kept open between requests, at most 5 in use per worker (as the api's read
connections, ``dps_common.db``: under the gevent worker a thread-local one would be one per client
connection), opened on first use.
Env: DATABASE_URL, BENCH_ORG_ID. Served as ``gunicorn psycopg_app:app``.
"""

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

import falcon
import orjson
import psycopg

LIMIT = 100
QUERY = """
SELECT id, spec_id, version, name, short_name, active, price_model, price_frequency,
       list_prices::text, tiers::text, locked, created_at, updated_at, cost::text
FROM products WHERE organization_id = %s ORDER BY id LIMIT %s
"""

_idle: list[psycopg.Connection] = []
_slots = threading.BoundedSemaphore(5)
_lock = threading.Lock()


@contextmanager
def connection() -> Iterator[psycopg.Connection]:
    with _slots:
        with _lock:
            conn = _idle.pop() if _idle else None
        if conn is None or conn.closed or conn.broken:
            conn = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
        try:
            yield conn
        finally:
            with _lock:
                _idle.append(conn)


def render(row: tuple) -> dict:
    (id_, spec_id, version, name, short_name, active, model, frequency, prices, tiers, locked, created, updated, cost) = row
    return {
        "id": id_,
        "specId": spec_id,
        "version": version,
        "name": name,
        "shortName": short_name,
        "active": active,
        "priceModel": model,
        "priceFrequency": frequency,
        "listPrices": orjson.Fragment(prices),
        "tiers": orjson.Fragment(tiers),
        "locked": locked,
        "createdAt": created,
        "updatedAt": updated,
        "cost": orjson.Fragment(cost),
    }


class Products:
    def __init__(self, organization_id: UUID):
        self._org = organization_id

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with connection() as conn:
            rows = conn.execute(QUERY, (self._org, LIMIT + 1)).fetchall()
        items = [render(r) for r in rows[:LIMIT]]
        resp.content_type = falcon.MEDIA_JSON
        resp.data = orjson.dumps({"products": items, "nextCursor": str(items[-1]["id"]) if len(rows) > LIMIT else None})


app = falcon.App()
app.add_route("/products", Products(UUID(os.environ["BENCH_ORG_ID"])))
