"""The event log's reads at volume (issue 27): ``GET /events``' query (``EventLog.list_events``) on
a fresh dispatcher database holding ``EVENTS`` events of ``ORGANIZATIONS`` organizations spread over
30 days, and ``GET /events/{id}``'s. Times the first page, a page deep in the walk (the cursor's
position half way down the organization's events), the same with a type filter, and the body of one
event; prints each query's plan, to show the keyset reads the index and never sorts.

    .venv/bin/python bench/event_log.py [EVENTS] [ORGANIZATIONS]

Times are the median of ``ROUNDS`` runs each, in this process (the database on the same machine)."""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import text

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.db import Transactions, make_engine
from dps_common.paging import PageRequest
from dps_testing.services import fresh_database

from dps_webhooks.db.events import page_statement
from dps_webhooks.db.migrate import upgrade
from dps_webhooks.domain.event_views import EventFilter, list_position
from dps_webhooks.services.event_log import EventLog

ROUNDS = 25
TYPES = ("quote.updated", "quote.approved", "product.created", "opportunity.updated")

_FILL = text("""
INSERT INTO webhook_events (id, organization_id, event_type, occurred_at, body, body_bytes, received_at)
SELECT gen_random_uuid(), (:orgs)[1 + n % cardinality(:orgs)], (:types)[1 + (n / 7) % cardinality(:types)],
       t, '{"id":"x","data":{"pad":"' || repeat('x', 1800) || '"}}', 1830, t
FROM generate_series(1, :count) AS n, LATERAL (SELECT now() - (n * interval '30 days' / :count) AS t) AS at
""")


def median_ms(run: Callable[[], object]) -> float:
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(events: int, organizations: int) -> None:
    with fresh_database("dps_bench_events") as url:
        upgrade(url)
        engine = make_engine(url, application_name="bench-event-log")
        tx = Transactions.for_engine(engine)
        orgs = [uuid.uuid4() for _ in range(organizations)]
        started = time.perf_counter()
        with tx() as session:
            session.execute(_FILL, {"orgs": orgs, "types": list(TYPES), "count": events})
        with engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE webhook_events"))
        print(f"{events} events of {organizations} organizations stored in {time.perf_counter() - started:.1f} s")

        log, org = EventLog(tx), orgs[0]
        principal = Principal(org, "Bench", uuid.uuid4(), Role.VIEW_ONLY, "bench")
        with tx.read() as session:
            all_of_org = session.execute(
                text("SELECT received_at, id FROM webhook_events WHERE organization_id = :o ORDER BY 1 DESC, 2 DESC"),
                {"o": org},
            ).all()
        middle = all_of_org[len(all_of_org) // 2]
        deep = PageRequest(50, list_position(middle.received_at, middle.id))
        first = PageRequest(50, None)
        typed = EventFilter(type="quote.approved")
        window = EventFilter(received_after=datetime.now(UTC).replace(day=1), received_before=datetime.now(UTC))
        some_id = all_of_org[10].id
        cases = {
            "first page (50)": lambda: log.list_events(principal, EventFilter(), first),
            f"page {len(all_of_org) // 2 // 50} deep": lambda: log.list_events(principal, EventFilter(), deep),
            "first page, type": lambda: log.list_events(principal, typed, first),
            "deep page, type": lambda: log.list_events(principal, typed, deep),
            "first page, window": lambda: log.list_events(principal, window, first),
            "GET /events/{id} body": lambda: log.event_body(principal, some_id),
        }
        print(f"organization's events: {len(all_of_org)}; median of {ROUNDS} runs each")
        for name, run in cases.items():
            print(f"  {name:24} {median_ms(run):7.2f} ms")
        for name, filters, page in (("deep page", EventFilter(), deep), ("deep page, type", typed, deep)):
            with tx.read() as session:
                statement = page_statement(org, filters, page)
                compiled = statement.compile(session.get_bind(), compile_kwargs={"literal_binds": True})
                plan = [row[0] for row in session.execute(text(f"EXPLAIN (ANALYZE, BUFFERS) {compiled}"))]
            print(f"plan, {name}:\n    " + "\n    ".join(plan))
        tx.dispose()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300_000, int(sys.argv[2]) if len(sys.argv) > 2 else 10)
