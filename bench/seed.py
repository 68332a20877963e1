"""A fresh, migrated database with one organization, its admin key and N products (COPY, seconds not minutes)."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from dps_common.db import Transactions, make_engine
from dps_common.ids import new_id

from dps_api.db.migrate import upgrade
from dps_api.services.identity import IdentityService

DEFAULT_SERVER_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
PRICE_MODELS = ("FLAT", "PER_UNIT", "TIERED", "HOURLY", "RAMPED", "ONE_TIME_FEE")
RECURRING = ("MONTHLY", "QUARTERLY", "SEMI_ANNUAL", "ANNUAL")

# one product version: the columns products and product_versions share
FIELDS = (
    "organization_id", "spec_id", "version", "name", "short_name", "active", "price_model", "price_frequency",
    "list_prices", "tiers", "locked", "cost", "created_at", "updated_at",
)


@dataclass(frozen=True)
class Seeded:
    database_url: str
    pepper: str  # the api's API_KEY_PEPPER: the admin key was hashed with it
    organization_id: UUID
    admin_key: str
    products: int


def seed(database_url: str, products: int) -> Seeded:
    pepper = secrets.token_hex(32)
    upgrade(database_url)
    engine = make_engine(database_url, pool_size=1, application_name="dps-bench-seed")
    try:
        identity = IdentityService(
            Transactions.for_engine(engine), pepper.encode(), lambda: datetime.now(UTC), lambda _: None
        )
        org = identity.create_organization("Bench Corp")
        admin = identity.create_user(org.id, "admin@bench.example", "Bench Admin", "admin")
        key = identity.issue_key(org.id, admin.id, "admin", "bench admin key")
    finally:
        engine.dispose()
    copy_products(database_url, org.id, products)
    return Seeded(database_url, pepper, org.id, key.secret, products)


def product_version(org_id: UUID, i: int, now: datetime) -> tuple:
    """Product number ``i`` as version 1: varied price models, a few inactive and locked ones."""
    model = PRICE_MODELS[i % len(PRICE_MODELS)]
    frequency = "ONE_TIME" if model == "ONE_TIME_FEE" else RECURRING[i % len(RECURRING)]
    prices = {"USD": f"{10 + i % 990}.{i % 100:02d}", "EUR": f"{9 + i % 900}.50", "JPY": str(1000 + i % 90000)}
    lower = {"USD": f"{8 + i % 990}.00", "EUR": f"{7 + i % 900}.00", "JPY": str(800 + i % 90000)}
    tiers = (
        {c: [{"upTo": "10", "unitPrice": prices[c]}, {"upTo": None, "unitPrice": lower[c]}] for c in prices}
        if model == "TIERED"
        else {}
    )
    stamp = now + timedelta(microseconds=i)
    return (
        org_id, f"SPEC-{i:07d}", 1, f"Bench product {i}", f"BP{i}" if i % 3 else None, i % 10 != 0, model, frequency,
        Jsonb(prices), Jsonb(tiers), i % 7 == 0, Jsonb({"USD": f"{4 + i % 400}.25"}), stamp, stamp,
    )


def copy_products(database_url: str, org_id: UUID, count: int) -> None:
    """Writes each product once to ``products`` (the current version) and once to ``product_versions``."""
    started = time.monotonic()
    now = datetime.now(UTC)
    columns = ", ".join(FIELDS)
    with psycopg.connect(database_url) as conn, conn.cursor() as cur:
        ids = [new_id() for _ in range(count)]  # UUIDv7: id order is creation order, as the api's are
        with cur.copy(f"COPY products (id, {columns}) FROM STDIN") as copy:
            for i, product_id in enumerate(ids):
                copy.write_row((product_id, *product_version(org_id, i, now)))
        with cur.copy(f"COPY product_versions (product_id, {columns}) FROM STDIN") as copy:
            for i, product_id in enumerate(ids):
                copy.write_row((product_id, *product_version(org_id, i, now)))
        conn.commit()
        conn.autocommit = True
        cur.execute("VACUUM ANALYZE products")
        cur.execute("VACUUM ANALYZE product_versions")
    print(f"  seeded {count:,} products in {time.monotonic() - started:.1f} s")
