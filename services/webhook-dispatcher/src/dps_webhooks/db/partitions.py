"""The delivery history's daily partitions: naming, creating, adopting strays and dropping.

``webhook_deliveries`` is partitioned by RANGE on ``id`` and ``webhook_delivery_attempts`` on
``delivery_id``, one partition a day (UTC) in each, with the same bounds. A UUIDv7 id begins with its
creation time in milliseconds (``dps_common.ids``), so the ids made on one day are one range
(``first_id(day)`` to ``first_id(day + 1)``) and a delivery's attempts sit in the same day's attempts
partition. Keyed on the id, every key and constraint of the unpartitioned tables holds as it was
(a partitioned table's primary key and unique constraints must include the partition key): the
deliveries' primary key ``id``, the attempts' unique ``(delivery_id, attempt)``; the attempts' primary
key becomes ``(id, delivery_id)``. Every statement naming a delivery's id prunes to one partition.

The foreign key from attempts to deliveries is declared per day, partition to partition (each
attempts partition references its day's deliveries partition, ``ON DELETE CASCADE``), not between the
partitioned parents: detaching a partition that a parent-level key references makes PostgreSQL check
every referencing row against it, a join over the whole attempts table holding the parent's lock
(bench/history.py measures it). Per day, retention drops the attempts partition, then the
deliveries partition, and nothing is checked.

A DEFAULT partition in each table takes any row no daily partition covers (ids not UUIDv7, days
that the maintenance did not create in time), so an insert never fails for want of a partition. It
is purged the old way (batched deletes by ``created_at``); ``ensure_days`` moves the rows of a day it
creates out of it first. Partitions live in their own schema (``webhook_partitions``) so that the
public schema holds exactly the models' tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from uuid import UUID

from sqlalchemy import Connection, text

SCHEMA = "webhook_partitions"
DELIVERIES = "webhook_deliveries"
ATTEMPTS = "webhook_delivery_attempts"
HOURS = "webhook_endpoint_hours"  # the attempts counted per endpoint and hour, by their deliveries' day
# The columns as migration 0005 copied them (it imports these); a move today copies every column the
# table has (``_columns``): later migrations added some (0006 the attempts' signing).
DELIVERY_COLUMNS = (
    "id", "organization_id", "endpoint_id", "event_id", "event_type", "status", "is_test", "retry_of",
    "attempt_count", "next_attempt_at", "claim_token", "last_response_status", "last_response_excerpt",
    "last_error_message", "last_duration_ms", "last_attempted_at", "completed_at", "created_at",
)  # fmt: skip
ATTEMPT_COLUMNS = (
    "id", "delivery_id", "attempt", "attempted_at", "response_status", "response_excerpt", "error_message",
    "duration_ms",
)  # fmt: skip


def first_id(day: date) -> UUID:
    """The smallest UUIDv7 of ``day`` (UTC): its time bits at midnight, every other bit zero."""
    milliseconds = int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() * 1000)
    return UUID(int=milliseconds << 80)


def day_of(delivery_id: UUID) -> date:
    """The UTC day a UUIDv7's time bits name (meaningless for other versions)."""
    return datetime.fromtimestamp((delivery_id.int >> 80) / 1000, UTC).date()


def partition(table: str, day: date | None) -> str:
    """``webhook_partitions.<table>_pYYYYMMDD``, or the table's ``_default`` partition for None."""
    return f"{SCHEMA}.{_name(table, day)}"


def _name(table: str, day: date | None) -> str:
    return f"{table}_default" if day is None else f"{table}_p{day:%Y%m%d}"


def _bounds(day: date) -> str:
    return f"FOR VALUES FROM ('{first_id(day)}') TO ('{first_id(day + timedelta(days=1))}')"


def _attempts_reference(day: date | None) -> str:
    """The per-day foreign key of an attempts partition to its deliveries partition."""
    return (
        f"CONSTRAINT fk_{_name(ATTEMPTS, day)}_delivery_id FOREIGN KEY (delivery_id)"
        f" REFERENCES {partition(DELIVERIES, day)} (id) ON DELETE CASCADE"
    )


def create_schema_and_defaults(connection: Connection) -> None:
    """The partitions' schema and both DEFAULT partitions (the parents exist already)."""
    connection.exec_driver_sql(f"CREATE SCHEMA {SCHEMA}")
    connection.exec_driver_sql(f"CREATE TABLE {partition(DELIVERIES, None)} PARTITION OF {DELIVERIES} DEFAULT")
    connection.exec_driver_sql(
        f"CREATE TABLE {partition(ATTEMPTS, None)} PARTITION OF {ATTEMPTS} ({_attempts_reference(None)}) DEFAULT"
    )


def existing_days(connection: Connection) -> list[date]:
    """The days that have a deliveries partition, oldest first."""
    names = connection.execute(_PARTITIONS_OF, {"parent": DELIVERIES, "schema": SCHEMA}).scalars()
    prefix = f"{DELIVERIES}_p"
    return sorted(datetime.strptime(name[len(prefix) :], "%Y%m%d").date() for name in names if name.startswith(prefix))


_PARTITIONS_OF = text(
    "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
    " JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE i.inhparent = CAST(:parent AS regclass) AND n.nspname = :schema"
)


def ensure_days(connection: Connection, days: Iterable[date]) -> list[date]:
    """Create the partitions of the days that have none (both tables); the days created. A day whose
    rows went to the DEFAULT partitions meanwhile is created by moving them out (``_adopt``)."""
    have = set(existing_days(connection))
    missing = sorted(set(days) - have)
    if not missing:
        return []
    strays = [day for day in missing if connection.execute(_STRAYS_IN_DEFAULT, _range(day)).scalar()]
    if strays:
        _adopt(connection, missing)
    else:
        for day in missing:
            _create_day(connection, day)
    return missing


_STRAYS_IN_DEFAULT = text(
    f"SELECT EXISTS (SELECT 1 FROM {SCHEMA}.{DELIVERIES}_default WHERE id >= :low AND id < :high)"
)


def _range(day: date) -> dict[str, UUID]:
    return {"low": first_id(day), "high": first_id(day + timedelta(days=1))}


def _create_day(connection: Connection, day: date) -> None:
    connection.exec_driver_sql(f"CREATE TABLE {partition(DELIVERIES, day)} PARTITION OF {DELIVERIES} {_bounds(day)}")
    connection.exec_driver_sql(
        f"CREATE TABLE {partition(ATTEMPTS, day)} PARTITION OF {ATTEMPTS} ({_attempts_reference(day)}) {_bounds(day)}"
    )


def _adopt(connection: Connection, days: list[date]) -> None:
    """Create ``days`` when the DEFAULT partitions hold rows of some of them (PostgreSQL refuses to
    create a partition whose rows sit in the default): detach both defaults, create the days, move
    their rows through the parents (which route them), attach the defaults again. Rare (the
    maintenance creates days a week ahead); it holds the parents' locks while it moves rows."""
    deliveries_default, attempts_default = partition(DELIVERIES, None), partition(ATTEMPTS, None)
    lock_parents(connection)
    connection.exec_driver_sql(f"ALTER TABLE {ATTEMPTS} DETACH PARTITION {attempts_default}")
    connection.exec_driver_sql(f"ALTER TABLE {DELIVERIES} DETACH PARTITION {deliveries_default}")
    for day in days:
        _create_day(connection, day)
        deliveries, attempts = _columns(connection, deliveries_default), _columns(connection, attempts_default)
        in_day = _range(day)
        connection.execute(
            text(
                f"INSERT INTO {DELIVERIES} ({deliveries}) SELECT {deliveries} FROM {deliveries_default}"
                " WHERE id >= :low AND id < :high"
            ),
            in_day,
        )
        # with their endpoint (those recorded before migration 0008 have none): an attempt inserted
        # without it is counted in the endpoints' hours, a second time here (db/models/endpoint_hours.py)
        moved = ", ".join(
            "coalesce(a.endpoint_id, d.endpoint_id)" if name == "endpoint_id" else f"a.{name}"
            for name in attempts.split(", ")
        )
        connection.execute(
            text(
                f"INSERT INTO {ATTEMPTS} ({attempts}) SELECT {moved} FROM {attempts_default} AS a"
                f" JOIN {deliveries_default} AS d ON d.id = a.delivery_id"
                " WHERE a.delivery_id >= :low AND a.delivery_id < :high"
            ),
            in_day,
        )
        # the attempts go with their deliveries (the defaults' foreign key cascades)
        connection.execute(text(f"DELETE FROM {deliveries_default} WHERE id >= :low AND id < :high"), in_day)
    connection.exec_driver_sql(f"ALTER TABLE {DELIVERIES} ATTACH PARTITION {deliveries_default} DEFAULT")
    connection.exec_driver_sql(f"ALTER TABLE {ATTEMPTS} ATTACH PARTITION {attempts_default} DEFAULT")


def _columns(connection: Connection, table: str) -> str:
    """Every column of ``table``, comma-separated in their order: a move that named a fixed list would
    leave a column added since then empty (or fail on its NOT NULL)."""
    names = connection.execute(_COLUMNS_OF, {"table": table}).scalars()
    return ", ".join(names)


_COLUMNS_OF = text(
    "SELECT attname FROM pg_attribute WHERE attrelid = CAST(:table AS regclass) AND attnum > 0 AND NOT attisdropped"
    " ORDER BY attnum"
)


def drop_day(connection: Connection, day: date) -> None:
    """Detach and drop a day's partitions: its attempts first (they reference its deliveries); and
    the day's counts of its attempts in the endpoints' hours (after the locks: a recording that
    adds to them holds the parents first)."""
    lock_parents(connection)
    connection.execute(text(f"DELETE FROM {HOURS} WHERE delivery_day = :day"), {"day": day})
    for table in (ATTEMPTS, DELIVERIES):
        connection.exec_driver_sql(f"ALTER TABLE {table} DETACH PARTITION {partition(table, day)}")
        connection.exec_driver_sql(f"DROP TABLE {partition(table, day)}")


def lock_parents(connection: Connection) -> None:
    """Both tables and all their partitions, deliveries first, as every reader and writer takes them.

    Detaching and dropping go attempts first, and dropping an attempts partition locks the deliveries
    partition it references: without this, a reader holding the deliveries parent and reaching for
    that partition deadlocks with the DDL, and either side may be the one aborted. Taken up front, in
    the order readers take them, the DDL and a reader never wait on each other in a cycle.
    """
    connection.exec_driver_sql(f"LOCK TABLE {DELIVERIES}, {ATTEMPTS} IN ACCESS EXCLUSIVE MODE")
