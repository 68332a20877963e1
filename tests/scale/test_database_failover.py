"""The services' database fails over (issue 28): a primary and a synchronous streaming standby of the
test's own, both services' databases on them, the services given the multi-host URL
(``target_session_attrs=read-write``). Writes and reads at a steady rate on the api and the
dispatcher; the primary is SIGKILLed, the standby promoted a few seconds later. Every answer in the
gap is a 503 with Retry-After (never another 5xx), every write answered 2xx is in the new primary,
every event the api committed reaches the receiver through the relay and the dispatcher's worker
(both reconnect on their own), and the time from the promotion to each service's first success is
measured."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psycopg
import pytest
import requests
from scale_postgres import PG_BIN, FailoverPair
from scale_stack import BIN, Figures, api_env, dispatcher_env, https, migrate, process, wait_for

from dps_testing.availability import unavailable
from dps_testing.processes import gunicorn, write_tls_files
from dps_testing.provisioning import Admin, Org
from dps_testing.services import fresh_vhost
from dps_testing.webhook_receiver import Receiver

PAUSE_SECONDS = 0.1  # each load loop's pause between requests: about 10 requests a second each
BEFORE_KILL_SECONDS = 4
GAP_SECONDS = 3  # primary lost, standby not promoted yet
AFTER_PROMOTION_SECONDS = 8
DELIVERY_DEADLINE_SECONDS = 90


@dataclass(frozen=True)
class Answer:
    service: str
    kind: str  # "write" or "read"
    started: float
    ended: float
    status: int  # 0: no HTTP answer at all
    retry_after: str | None
    created: str | None  # a write's new id


@dataclass
class Stack:
    pair: FailoverPair
    api: str
    hooks: str
    ca: str
    receiver: Receiver
    org: Org


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    if not (PG_BIN / "pg_basebackup").exists():
        unavailable(f"the failover scenario needs PostgreSQL's server binaries in {PG_BIN} (DPS_PG_BIN)")
    logs = tmp_path_factory.mktemp("database-failover-logs")
    tls = write_tls_files(tmp_path_factory.mktemp("tls"))
    pair = FailoverPair()
    try:
        pair.start()
        pair.create_database("dps_api")
        pair.create_database("dps_webhooks")
        with fresh_vhost("dps_scale_failover") as amqp_url, Receiver(tls) as receiver:
            env = api_env(pair.url("dps_api"), amqp_url)
            migrate("dealpricing-admin", env)
            with gunicorn("dps_api.wsgi:create()", env, tls, logs / "api.log", workers=1) as api:
                hooks_env = dispatcher_env(pair.url("dps_webhooks"), amqp_url, api, tls["ca"])
                migrate("dealpricing-webhooks", hooks_env)
                with (
                    gunicorn("dps_webhooks.wsgi:create()", hooks_env, tls, logs / "dispatcher.log", workers=1) as hooks,
                    process("relay", [str(BIN / "dealpricing-outbox-relay")], env, logs),
                    process("worker", [str(BIN / "dealpricing-webhooks"), "worker"], hooks_env, logs),
                ):
                    org = Admin(env).organization("Failover Corp")
                    endpoint = https(tls["ca"]).post(hooks + "/external/v1/webhook-configs", headers=org.admin.headers,
                                                     json={"url": receiver.url("/failover")}, timeout=30)
                    assert endpoint.status_code == 201, endpoint.text
                    yield Stack(pair, api, hooks, tls["ca"], receiver, org)
    finally:
        pair.close()


class Load:
    """Loops of requests at a steady pace, each answer recorded, until ``stop``."""

    def __init__(self, ca: str) -> None:
        self.answers: list[Answer] = []
        self.stop = threading.Event()
        self._ca = ca
        self._threads: list[threading.Thread] = []

    def loop(self, service: str, kind: str, send: Callable[[requests.Session, int], requests.Response]) -> None:
        def run() -> None:
            session, number = https(self._ca), 0
            while not self.stop.is_set():
                number += 1
                started = time.monotonic()
                try:
                    answer = send(session, number)
                    status, retry_after = answer.status_code, answer.headers.get("Retry-After")
                    created = answer.json().get("id") if kind == "write" and status == 201 else None
                except requests.RequestException:
                    status, retry_after, created = 0, None, None
                    session = https(self._ca)
                self.answers.append(Answer(service, kind, started, time.monotonic(), status, retry_after, created))
                self.stop.wait(PAUSE_SECONDS)

        thread = threading.Thread(target=run, name=f"load {service} {kind}")
        thread.start()
        self._threads.append(thread)

    def join(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(60)


def ids_in(dsn: str, table: str, ids: list[str]) -> set[str]:
    with psycopg.connect(dsn) as connection:
        rows = connection.execute(f"SELECT id::text FROM {table} WHERE id = ANY(%s::uuid[])", (ids,)).fetchall()
    return {row[0] for row in rows}


def test_requests_in_a_failover_answer_503_and_nothing_answered_2xx_is_lost(stack: Stack, figures: Figures) -> None:
    headers = stack.org.admin.headers
    load = Load(stack.ca)
    load.loop("api", "write", lambda s, n: s.post(stack.api + "/external/v1/opportunities", headers=headers,
                                                   json={"name": f"failover {n}", "accountName": "Initech"}, timeout=30))
    load.loop("api", "read", lambda s, n: s.get(stack.api + "/external/v1/opportunities?limit=5", headers=headers,
                                                 timeout=30))
    load.loop("dispatcher", "write", lambda s, n: s.post(
        stack.hooks + "/external/v1/webhook-configs", headers=headers, timeout=30,
        json={"url": stack.receiver.url(f"/never/{n}"), "eventTypes": ["quote.approved"]}))
    load.loop("dispatcher", "read", lambda s, n: s.get(stack.hooks + "/external/v1/webhook-configs?limit=5",
                                                        headers=headers, timeout=30))
    try:
        time.sleep(BEFORE_KILL_SECONDS)
        killed_at = time.monotonic()
        stack.pair.primary.kill()
        time.sleep(GAP_SECONDS)
        stack.pair.promote()
        promoted_at = time.monotonic()
        time.sleep(AFTER_PROMOTION_SECONDS)
    finally:
        load.join()

    answers = load.answers
    new_primary = stack.pair.standby
    opportunities = [a.created for a in answers if a.service == "api" and a.created]
    endpoints = [a.created for a in answers if a.service == "dispatcher" and a.created]
    kept = (ids_in(new_primary.dsn("dps_api"), "opportunities", opportunities)
            | ids_in(new_primary.dsn("dps_webhooks"), "webhook_endpoints", endpoints))

    with psycopg.connect(new_primary.dsn("dps_api")) as connection:
        committed = {str(row[0]) for row in connection.execute(
            "SELECT id FROM outbox_events WHERE organization_id = %s AND event_type = 'opportunity.created'",
            (stack.org.id,)).fetchall()}
    wait_for(lambda: committed <= {r.headers.get("webhook-id") for r in list(stack.receiver.received)},
             "every committed event at the receiver", timeout=DELIVERY_DEADLINE_SECONDS, every=0.5)

    for service in ("api", "dispatcher"):
        mine = [a for a in answers if a.service == service]
        after = [a.ended for a in mine if 200 <= a.status < 300 and a.started >= promoted_at]
        statuses = Counter(a.status for a in mine)
        figures.add(
            f"database failover, {service}",
            requests=len(mine),
            statuses={str(status): count for status, count in sorted(statuses.items())},
            answered_503_in_gap=sum(1 for a in mine if a.status == 503 and killed_at <= a.started < promoted_at),
            first_success_after_promotion_s=round(min(after) - promoted_at, 2) if after else None,
            last_failure_after_kill_s=round(max((a.ended for a in mine if a.status >= 500 or a.status == 0),
                                                default=killed_at) - killed_at, 2),
        )
    figures.add("database failover, events", committed=len(committed),
                delivered=len(committed & {r.headers.get("webhook-id") for r in list(stack.receiver.received)}))

    wrong = [a for a in answers if a.status == 0 or (a.status >= 500 and (a.status != 503 or not a.retry_after))]
    assert wrong == [], f"answers other than 2xx or a 503 with Retry-After: {wrong[:5]}"
    assert sum(1 for a in answers if a.status == 503) > 0  # the gap was seen
    assert set(opportunities) | set(endpoints) == kept  # every 2xx write is in the new primary
    for service in ("api", "dispatcher"):
        assert any(a.service == service and 200 <= a.status < 300 and a.started >= promoted_at for a in answers)
