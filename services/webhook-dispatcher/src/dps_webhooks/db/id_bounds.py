"""Bounds on a UUIDv7 id by time: an id begins with its creation time in milliseconds
(``dps_common.ids``), so ``id >= first_id_at(t)`` keeps the rows made at ``t`` or later and lets
PostgreSQL skip the days' partitions before it (``db/partitions.py``)."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID


def first_id_at(moment: datetime) -> UUID:
    """The smallest UUIDv7 made at ``moment`` (its milliseconds; every other bit zero)."""
    return UUID(int=int(moment.timestamp() * 1000) << 80)
