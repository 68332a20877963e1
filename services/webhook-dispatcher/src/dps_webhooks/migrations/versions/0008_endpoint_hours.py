"""an endpoint's attempts counted per hour as they are recorded (``webhook_endpoint_hours``:
``db/models/endpoint_hours.py``), so the stats' chart reads a row an hour instead of every attempt of
the window through the endpoint's deliveries; each attempt's endpoint (``endpoint_id``, written by
the recording from now on, which counts its own attempts in the same statement); a row trigger that
fills in and counts an attempt inserted without its endpoint; and a partial index of each endpoint's
successful deliveries by ``completed_at`` for the time-to-success percentiles, read index-only

The column is added nullable (a catalog change: the history is not rewritten; its attempts keep
NULL, which nothing reads). The counts of the history already there are filled in day partition by
day partition, each read once (its attempts joined to its deliveries, grouped) into the new small
table. That runs in one transaction with the trigger made first, so every attempt is counted
exactly once: attempts recorded meanwhile by either version wait for its end (creating the trigger
locks the attempts against writes, never against reads); ``bench/endpoint_stats.py`` times it.

The percentiles' index is built ``CONCURRENTLY`` on each deliveries partition (after that
transaction), then attached to the parent's, which is valid once every partition has it: writers
are never blocked by its build.

Revision ID: 0008_endpoint_hours
Revises: 0007_event_log
"""

import sqlalchemy as sa
from alembic import op

from dps_webhooks.db.models.endpoint_hours import ATTEMPT_SUCCEEDED, FILL_FUNCTION, FILL_TRIGGER
from dps_webhooks.db.partitions import ATTEMPTS, DELIVERIES, SCHEMA

revision = "0008_endpoint_hours"
down_revision = "0007_event_log"
branch_labels = None
depends_on = None

HOURS = "webhook_endpoint_hours"
# the UTC day of a UUIDv7 (its first 48 bits, milliseconds): the day partition its delivery is in
_DAY_OF = (
    "(to_timestamp(('x' || substr(replace(CAST({id} AS text), '-', ''), 1, 12))::bit(48)::bigint / 1000.0)"
    " AT TIME ZONE 'UTC')::date"
)
# the history's attempts of {attempts} joined to their deliveries in {deliveries}, added to their hours' counts
_ADD_COUNTS = f"""
    INSERT INTO {HOURS} AS h (endpoint_id, hour, delivery_day, succeeded, failed)
    SELECT d.endpoint_id, date_trunc('hour', a.attempted_at, 'UTC'), {_DAY_OF.format(id="a.delivery_id")},
           count(*) FILTER (WHERE a.ok), count(*) FILTER (WHERE NOT a.ok)
    FROM (SELECT delivery_id, attempted_at, {ATTEMPT_SUCCEEDED} AS ok FROM {{attempts}}) AS a
    JOIN {{deliveries}} AS d ON d.id = a.delivery_id
    GROUP BY 1, 2, 3
    ON CONFLICT (endpoint_id, hour, delivery_day)
    DO UPDATE SET succeeded = h.succeeded + excluded.succeeded, failed = h.failed + excluded.failed
"""
# An attempt inserted without its endpoint (the previous version's workers while this runs, a test's
# or a bench's seeding; never the recording, which counts its own: services/recording.py) gets it
# from its delivery, and is counted into its hour. The WHEN lets every other row through untouched.
_FILL_FUNCTION = f"""
CREATE FUNCTION {FILL_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ok boolean := coalesce(NEW.response_status BETWEEN 200 AND 299, false) AND NEW.error_message IS NULL;
BEGIN
    NEW.endpoint_id := (SELECT endpoint_id FROM {DELIVERIES} WHERE id = NEW.delivery_id);
    IF NEW.endpoint_id IS NOT NULL THEN  -- else an attempt of no delivery, which its foreign key refuses
        INSERT INTO {HOURS} AS h (endpoint_id, hour, delivery_day, succeeded, failed)
        VALUES (NEW.endpoint_id, date_trunc('hour', NEW.attempted_at, 'UTC'), {_DAY_OF.format(id="NEW.delivery_id")},
                CAST(ok AS integer), CAST(NOT ok AS integer))
        ON CONFLICT (endpoint_id, hour, delivery_day)
        DO UPDATE SET succeeded = h.succeeded + excluded.succeeded, failed = h.failed + excluded.failed;
    END IF;
    RETURN NEW;
END $$
"""
PERCENTILES_INDEX = "ix_webhook_deliveries_endpoint_id_succeeded"
_PERCENTILES_DEFINITION = (
    "(endpoint_id, completed_at) INCLUDE (id, created_at, last_attempted_at, last_duration_ms)"
    " WHERE status = 'SUCCESS'"
)

_PARTITIONS = sa.text(
    "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
    " JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE i.inhparent = CAST(:parent AS regclass) AND n.nspname = :schema ORDER BY c.relname"
)


def _partitions(table: str) -> list[str]:
    """``table``'s partitions (in ``SCHEMA``): every day's and the DEFAULT one."""
    return list(op.get_bind().execute(_PARTITIONS, {"parent": table, "schema": SCHEMA}).scalars())


def upgrade() -> None:
    op.create_table(
        HOURS,
        sa.Column("endpoint_id", sa.Uuid(), nullable=False),
        sa.Column("hour", sa.DateTime(timezone=True), nullable=False),
        sa.Column("delivery_day", sa.Date(), nullable=False),
        sa.Column("succeeded", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.CheckConstraint("succeeded >= 0 AND failed >= 0", name=op.f("ck_webhook_endpoint_hours_counts")),
        sa.ForeignKeyConstraint(
            ["endpoint_id"], ["webhook_endpoints.id"], ondelete="CASCADE",
            name=op.f("fk_webhook_endpoint_hours_endpoint_id_webhook_endpoints"),
        ),
        sa.PrimaryKeyConstraint("endpoint_id", "hour", "delivery_day", name=op.f("pk_webhook_endpoint_hours")),
    )  # fmt: skip
    op.create_index("ix_webhook_endpoint_hours_delivery_day", HOURS, ["delivery_day"])
    op.add_column(ATTEMPTS, sa.Column("endpoint_id", sa.Uuid()))  # a catalog change: nothing rewritten
    op.execute(_FILL_FUNCTION)
    op.execute(
        f"CREATE TRIGGER {FILL_TRIGGER} BEFORE INSERT ON {ATTEMPTS} FOR EACH ROW WHEN (NEW.endpoint_id IS NULL)"
        f" EXECUTE FUNCTION {FILL_FUNCTION}()"
    )
    for attempts in _partitions(ATTEMPTS):  # the history so far, a day at a time
        deliveries = DELIVERIES + attempts[len(ATTEMPTS) :]  # the same day's (or the DEFAULT) deliveries
        op.execute(_ADD_COUNTS.format(attempts=f"{SCHEMA}.{attempts}", deliveries=f"{SCHEMA}.{deliveries}"))
    with op.get_context().autocommit_block():
        op.execute(f"CREATE INDEX IF NOT EXISTS {PERCENTILES_INDEX} ON ONLY {DELIVERIES} {_PERCENTILES_DEFINITION}")
        for part in _partitions(DELIVERIES):
            part_index = f"{part}_ep_succeeded"
            op.execute(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {part_index} ON {SCHEMA}.{part} {_PERCENTILES_DEFINITION}")
            op.execute(f"ALTER INDEX {PERCENTILES_INDEX} ATTACH PARTITION {SCHEMA}.{part_index}")


def downgrade() -> None:
    op.drop_index(PERCENTILES_INDEX, table_name=DELIVERIES)  # its partitions' with it
    op.execute(f"DROP TRIGGER {FILL_TRIGGER} ON {ATTEMPTS}")
    op.execute(f"DROP FUNCTION {FILL_FUNCTION}()")
    op.drop_column(ATTEMPTS, "endpoint_id")
    op.drop_table(HOURS)
