"""Two of every process behind the one address (issue 28): ``DPS_REPLICAS=2`` make run (two api, two
dispatcher, two connector and two console HTTP servers, two of each relay and worker; the proxy
balancing round robin) on a PostgreSQL server of the test's own and the machine's RabbitMQ and Redis. The pairs act as one: the
organization's rate limit is exact across the two api servers, a key revoked through one console is
refused by every key-checking process (caches of 10 minutes: only the revocation events can drop it),
an idempotent POST is replayed by the other server, a console session made on one works on the other,
no event is delivered twice and no push is made twice. Then the same under load with one of each pair
SIGKILLed (make run's supervisor starts it again a second later, as the cluster would): every write
answered 2xx is kept and replayed, every committed event delivered (duplicates counted: an attempt in
flight on a killed worker is retried by the other), every push made once."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import psycopg
import pytest
import requests
from scale_clients import Api, Console, approved_quote, connect_billing, wait_pushed
from scale_postgres import private_server
from scale_replicas import (
    BILLING_APP,
    EVERY_KIND,
    ReplicatedRun,
    plain,
    replicated_run,
    runner_env,
    stand_in_urls,
)
from scale_stack import Figures, wait_for

from dps_testing.processes import write_tls_files
from dps_testing.provisioning import Admin, Member, Org
from dps_testing.services import fresh_vhost, unique_name
from dps_testing.webhook_receiver import Receiver

from dps_billing_stand_in import BillingStandIn

LIMIT = 150  # per organization and 10 s: under 200 a process never leases units, so the count is exact
BURST = 450
KEY_CHECKS = {"api": "/whoami", "dispatcher": "/webhook-configs", "connector": "/billing-connection"}
REVOCATIONS = 4
EVENTS = 120
PUSHES = 3
PUSHES_UNDER_KILL = 6  # two at a time per billing worker
PLATFORM_LATENCY_SECONDS = 0.5  # each platform call under the kill: pushes still running when it comes
KILL_AFTER_PUSHES_SECONDS = 1.5
LOAD_AFTER_KILL_SECONDS = 8


@dataclass
class Stack:
    run: ReplicatedRun
    admin: Admin
    stand_in: BillingStandIn
    receiver: Receiver
    api_database: str
    orgs: dict[str, Org]
    console: Console


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("two-of-every-process")
    tls = write_tls_files(tmp)
    with (
        private_server("dps_pairs_api", "dps_pairs_wh", "dps_pairs_bill", "dps_pairs_con") as databases,
        fresh_vhost("dps_pairs") as amqp_url, Receiver(tls) as receiver,
    ):
        api_db, hooks_db = databases["dps_pairs_api"], databases["dps_pairs_wh"]
        billing_db, console_db = databases["dps_pairs_bill"], databases["dps_pairs_con"]
        env = runner_env(tmp / "run", {"api": api_db, "webhooks": hooks_db, "billing": billing_db, "console": console_db},
                         amqp_url, REDIS_URL="redis://127.0.0.1:6379/0", RATE_LIMIT_KEY_PREFIX=unique_name("pairs"),
                         RATE_LIMIT_ORGANIZATION=f"{LIMIT}/10 seconds", KEY_CACHE_TTL_SECONDS="600",
                         WEBHOOK_RECEIVER_CA_FILE=tls["ca"], WEBHOOK_ALLOWED_NETWORKS="127.0.0.0/8")
        public = f"http://127.0.0.1:{env['PORT']}"
        stand_in = BillingStandIn.start(
            secret_key=BILLING_APP["BILLING_SECRET_KEY"], client_id=BILLING_APP["BILLING_CLIENT_ID"],
            redirect_uris=[public + "/external/v1/billing-connection/callback"],
            webhook_url=public + "/external/v1/billing-platform/webhooks",
            webhook_secret=BILLING_APP["BILLING_WEBHOOK_SECRET"])
        try:
            env.update(stand_in_urls(stand_in.api_url, stand_in.marketplace_url))
            with replicated_run(env, tmp / "make-run.log") as run:
                admin = Admin({"DATABASE_URL": api_db, "API_KEY_PEPPER": env["API_KEY_PEPPER"]})
                names = ("limits", "keys", "events", "pushes")
                with ThreadPoolExecutor(len(names)) as pool:
                    orgs = dict(zip(names, pool.map(lambda n: admin.organization(f"Pairs {n}"), names), strict=True))
                api = Api(run.origin)
                events_admin = orgs["events"].admin
                api.ok("POST", "/webhook-configs", events_admin, 201,
                       json={"url": receiver.url("/pairs"), "eventTypes": ["opportunity.created"]})
                connect_billing(api, orgs["pushes"].admin)
                console = Console(run.origin, run.mailbox)
                console.sign_in(run.origin, orgs["keys"].admin.email)  # the keys' admin revokes them
                yield Stack(run, admin, stand_in, receiver, api_db, orgs, console)
        finally:
            stand_in.stop()


def committed(api_database: str, org_id: str) -> set[str]:
    with psycopg.connect(api_database) as connection:
        rows = connection.execute("SELECT id::text FROM outbox_events WHERE organization_id = %s AND event_type = %s",
                                  (org_id, "opportunity.created")).fetchall()
    return {row[0] for row in rows}


def opportunity_names(api_database: str, org_id: str) -> list[str]:
    with psycopg.connect(api_database) as connection:
        rows = connection.execute("SELECT name FROM opportunities WHERE organization_id = %s", (org_id,)).fetchall()
    return [row[0] for row in rows]


def deliveries(receiver: Receiver) -> Counter[str]:
    """The events org's deliveries (``/pairs``) by ``webhook-id``."""
    return Counter(request.headers.get("webhook-id", "") for request in list(receiver.received) if request.path == "/pairs")


def exact_rate_limit(stack: Stack, org: Org) -> dict[str, object]:
    """``BURST`` requests of one organization at once through the one address: exactly ``LIMIT`` allowed."""
    statuses: Counter[int] = Counter()
    servers: set[str] = set()
    lock = threading.Lock()

    def ask(_: int) -> None:
        session = getattr(local, "session", None) or plain()
        local.session = session  # one per thread: a Session is not thread-safe
        answer = session.get(stack.run.origin + "/external/v1/whoami", headers=org.admin.headers, timeout=60)
        with lock:
            statuses[answer.status_code] += 1
            servers.add(answer.headers.get("x-request-id", "")[:16])

    local = threading.local()
    started = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(ask, range(BURST)))
    return {"statuses": dict(statuses), "seconds": round(time.monotonic() - started, 2), "servers": len(servers)}


def revoke_everywhere(stack: Stack, members: list[Member], console_origin: str) -> dict[str, object]:
    """Each key seen by every key-checking server (cached), revoked through ``console_origin``; every
    server polled until it refuses the key. The slowest refusal after the console's answer."""
    servers = [(origin + "/external/v1" + path) for service, path in KEY_CHECKS.items()
               for origin in stack.run.replicas(service)]
    session = plain()

    def status(url: str, member: Member) -> int:
        try:
            return session.get(url, headers=member.headers, timeout=10).status_code
        except requests.ConnectionError:
            return 0  # a replica being started again

    def answers(url: str, member: Member, wanted: tuple[int, ...]) -> Callable[[], bool]:
        return lambda: status(url, member) in wanted

    for member in members:
        for url in servers:
            wait_for(answers(url, member, (200, 403, 404)), f"{url} accepting the key", timeout=60)
    slowest = 0.0
    for member in members:
        stack.console.revoke(console_origin, member.key_row_id)
        revoked_at = time.monotonic()
        for url in servers:
            wait_for(answers(url, member, (401,)), f"{url} refusing a revoked key", timeout=60, every=0.05)
        slowest = max(slowest, time.monotonic() - revoked_at)
    return {"keys": len(members), "servers": len(servers), "refused_by_all": len(members),
            "slowest_all_refused_s": round(slowest, 2)}


def replayed_on_each(stack: Stack) -> int:
    """A keyed POST to one replica, the same to the other: replayed with the first answer, per service."""
    org = stack.orgs["pushes"]
    quote_id = approved_quote(Api(stack.run.origin), org.admin, org.user)
    posts = {
        "api": ("/opportunities", {"name": "replayed", "accountName": "Initech"}, 201),
        "dispatcher": ("/webhook-configs", {"url": stack.receiver.url("/replayed"), "eventTypes": ["quote.approved"]}, 201),
        "connector": (f"/pricing-quotes/{quote_id}/billing-pushes", None, 202),
    }
    replays = 0
    for service, (path, body, created) in posts.items():
        key = f"pairs-{uuid.uuid4()}"
        first, second = (Api(origin).call("POST", path, org.admin, key=key, json=body)
                         for origin in stack.run.replicas(service))
        assert first.status_code == second.status_code == created, (service, first.text, second.text)
        assert second.headers.get("Idempotent-Replayed") == "true" and second.json()["id"] == first.json()["id"]
        replays += 1
    wait_pushed(Api(stack.run.origin), org.admin, {quote_id: second.json()["id"]})
    return replays


def start_pushes(stack: Stack, count: int) -> dict[str, str]:
    api, org = Api(stack.run.origin), stack.orgs["pushes"]
    quotes = [approved_quote(api, org.admin, org.user) for _ in range(count)]
    return {q: api.ok("POST", f"/pricing-quotes/{q}/billing-pushes", org.admin, 202)["id"] for q in quotes}


def pushed_once(stack: Stack, quote_ids: list[str]) -> Counter[str]:
    """How many quotes the platform holds for each of ours (each push creates one)."""
    made = Counter(q["metadata"].get("service_pricing_quote_id", "") for q in stack.stand_in.objects("quote"))
    return Counter({quote_id: made[quote_id] for quote_id in quote_ids})


def test_the_pairs_answer_as_one(stack: Stack, figures: Figures) -> None:
    processes = stack.run.processes()
    assert {kind: sorted(replicas) for kind, replicas in processes.items()} == {k: ["1", "2"] for k in EVERY_KIND}

    limits = exact_rate_limit(stack, stack.orgs["limits"])
    keys = [stack.orgs["keys"].member("user", f"revoked-{n}@pairs.example") for n in range(REVOCATIONS)]
    console_1, console_2 = stack.run.replicas("console")
    revocation = revoke_everywhere(stack, keys, console_1)
    sessions = {origin: stack.console.keys_page(origin).status_code for origin in stack.run.replicas("console")}
    replays = replayed_on_each(stack)

    api, events_admin = Api(stack.run.origin), stack.orgs["events"].admin
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda n: api.ok("POST", "/opportunities", events_admin, 201,
                                       json={"name": f"pairs {n}", "accountName": "Initech"}), range(EVENTS)))
    events = committed(stack.api_database, stack.orgs["events"].id)
    wait_for(lambda: events <= set(deliveries(stack.receiver)), "every event delivered", timeout=120, every=0.5)
    delivered = deliveries(stack.receiver)
    pushes = start_pushes(stack, PUSHES)
    statuses = wait_pushed(api, stack.orgs["pushes"].admin, pushes)
    made = pushed_once(stack, list(pushes))

    figures.add("two of every process", rate_limit=limits, revocations=revocation, console_session_on=sessions,
                idempotent_replays=replays, events_committed=len(events), events_delivered=len(events & set(delivered)),
                events_duplicated=sum(n - 1 for n in delivered.values()), pushes=dict(Counter(statuses.values())),
                platform_quotes_per_push=sorted(made.values()))
    assert limits["statuses"] == {200: LIMIT, 429: BURST - LIMIT} and limits["servers"] == 2
    assert set(sessions.values()) == {200}
    assert replays == 3
    assert len(events) == EVENTS and set(delivered) == events
    assert all(count == 1 for count in delivered.values())
    assert set(statuses.values()) == {"succeeded"} and len(statuses) == PUSHES
    assert set(made.values()) == {1}


class Writer:
    """Keyed POSTs at a steady pace through the one address; a request whose answer is lost (a 502 of a
    server killed mid-request, a 503 while none answers) is sent again with the same key, as a client
    of the documented contract does. Every key and the id it was answered with are kept."""

    def __init__(self, api: Api, member: Member):
        self.api, self.member = api, member
        self.created: dict[str, str] = {}  # idempotency key -> id
        # 409: claimed by a request that was running on the killed server; its claim holds the key until
        # its lease ends (dps_common.idempotency: 60 s), then a retry runs or replays it
        self.in_doubt: list[str] = []
        self.resent: Counter[int] = Counter()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="pairs writer")

    def send(self, key: str) -> requests.Response:
        return self.api.call("POST", "/opportunities", self.member, key=key,
                             json={"name": f"load {key.split('-')[1]}", "accountName": "Initech"})

    def settle_in_doubt(self) -> None:
        """The keys answered 409, sent again until their claims' leases end."""
        def settled(key: str) -> Callable[[], requests.Response | None]:
            return lambda: answer if (answer := self.send(key)).status_code != 409 else None

        for key in self.in_doubt:
            answer = wait_for(settled(key), "a claim's lease to end", timeout=90, every=2)
            assert answer.status_code == 201, answer.text[:500]
            self.created[key] = answer.json()["id"]

    def _run(self) -> None:
        number = 0
        while not self.stop.is_set():
            number += 1
            key = f"load-{number}-{uuid.uuid4().hex[:8]}"
            while True:
                try:
                    answer = self.send(key)
                except requests.ConnectionError:
                    self.resent[0] += 1
                    continue
                if answer.status_code in (502, 503):
                    self.resent[answer.status_code] += 1
                    time.sleep(0.1)
                    continue
                if answer.status_code == 409:
                    self.in_doubt.append(key)
                    break
                assert answer.status_code == 201, answer.text[:500]
                self.created[key] = answer.json()["id"]
                break
            self.stop.wait(0.1)


def test_one_of_each_pair_killed_under_load_loses_nothing(stack: Stack, figures: Figures) -> None:
    api, events_org = Api(stack.run.origin), stack.orgs["events"]
    writer = Writer(api, events_org.admin)
    writer.thread.start()
    pages: Counter[int] = Counter()
    reading = threading.Thread(target=lambda: [pages.update([stack.console.keys_page(stack.run.origin).status_code])
                                               for _ in iter(lambda: writer.stop.wait(0.2), True)])
    reading.start()
    slow_platform = stack.stand_in.faults.latency(PLATFORM_LATENCY_SECONDS, path_prefix="/v1/")
    try:
        pushes = start_pushes(stack, PUSHES_UNDER_KILL)
        time.sleep(KILL_AFTER_PUSHES_SECONDS)
        victims = {kind: replicas["1"] for kind, replicas in stack.run.processes().items()}
        for process in victims.values():
            stack.run.kill(process)
        running_at_kill = sum(api.ok("GET", f"/pricing-quotes/{q}/billing-pushes/{p}", stack.orgs["pushes"].admin)
                              ["status"] not in ("succeeded", "failed") for q, p in pushes.items())
        time.sleep(LOAD_AFTER_KILL_SECONDS)
    finally:
        writer.stop.set()
        writer.thread.join(120)
        reading.join(60)
        stack.stand_in.faults.remove(slow_platform)

    statuses = wait_pushed(api, stack.orgs["pushes"].admin, pushes)
    writer.settle_in_doubt()
    names = Counter(name for name in opportunity_names(stack.api_database, events_org.id) if name.startswith("load "))
    events = committed(stack.api_database, events_org.id)
    wait_for(lambda: events <= set(deliveries(stack.receiver)), "every event delivered", timeout=120, every=0.5)
    replays: Counter[bool] = Counter()
    for key, created_id in writer.created.items():  # every 2xx write kept: its key replays its answer
        again = writer.send(key)
        replays[again.status_code == 201 and again.headers.get("Idempotent-Replayed") == "true"
                and again.json()["id"] == created_id] += 1
    console_2 = stack.run.replicas("console")[1]
    after = revoke_everywhere(stack, [stack.orgs["keys"].member("user", "after-kill@pairs.example")], console_2)
    delivered = deliveries(stack.receiver)
    made = pushed_once(stack, list(pushes))
    restarted = stack.run.log_lines(r"make run: .* started again")

    figures.add("two of every process, one of each pair SIGKILLed", killed=sorted(victims), writes=len(writer.created),
                pushes_running_at_kill=running_at_kill,
                resent_after=dict(writer.resent), replayed=replays[True], console_pages=dict(pages),
                events_committed=len(events), events_delivered=len(events & set(delivered)),
                events_duplicated=sum(n - 1 for n in delivered.values()), pushes=dict(Counter(statuses.values())),
                platform_quotes_per_push=sorted(made.values()), revocation_after=after, restarted=len(restarted),
                in_doubt_409=len(writer.in_doubt), opportunities_written_twice=sum(n - 1 for n in names.values()))
    assert sorted(victims) == sorted(EVERY_KIND)
    assert replays == {True: len(writer.created)}
    assert len(names) == len(writer.created)
    # twice only if a server died between the request's commit and the keeping of its answer, then
    # the retry after the claim's lease ran it again (the window dps_common.idempotency.store names)
    assert sum(n - 1 for n in names.values()) <= len(writer.in_doubt)
    assert set(delivered) == events
    # at least once: a delivery in flight on the killed worker is retried by the other (at most its 16
    # attempts in flight); nothing else is delivered twice
    assert sum(n - 1 for n in delivered.values()) <= 16
    assert set(statuses.values()) == {"succeeded"} and len(statuses) == PUSHES_UNDER_KILL
    assert set(made.values()) == {1}
    assert set(pages) == {200}
