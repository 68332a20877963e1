"""``make run`` started as a new user starts it (``make run`` in the repository, the embedded PostgreSQL
and broker, nothing else): the README's quickstart works against it as written, on the one address
(the proxy) every operation of the document reaches the service that owns it, the banner's sign-in
link signs the demo admin in to the console, and it stops cleanly however it is asked, leaving no
process behind (no PostgreSQL, gunicorn, worker, relay, stand-in, mailbox or proxy).

A full start costs most of a minute, so the tests that only need a running system share the run
folder's first start (``first_start``), in the order written: the quickstart, the one address, the
console's sign-in (its link works once), then Ctrl-C stops it. Every other way to stop is the stop of
a start another check needs anyway: the later starts in the same folder (the same admin key) and the
start on the machine's servers."""

from __future__ import annotations

import html
import http.client
import http.cookiejar
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import psutil
import pytest
from make_run import REPO, MakeRun
from one_address import BEHIND, call, document, operations

from dps_testing.processes import free_port

QUICKSTART = re.compile(r"<!-- quickstart:begin -->\n```bash\n(.*?)```\n<!-- quickstart:end -->", re.DOTALL)
DELIVERY_SECONDS = 60


RECEIVED = re.compile(r"^(verified|NOT VERIFIED) ")  # a delivery, as the receiver prints it
API_LINE = re.compile(r"^   API +(http://\S+)   ", re.MULTILINE)


def quickstart_block() -> str:
    """The README's quickstart, as written (its receiver takes a free port itself)."""
    [block] = QUICKSTART.findall((REPO / "README.md").read_text())
    return block


# every process a start with the embedded servers runs (with the machine's, all but PostgreSQL)
RUNNING = ("postgres", "dps_api.wsgi", "dps_webhooks.wsgi", "dps_billing.wsgi", "dps_console.wsgi",
           "dealpricing-webhooks worker", "dealpricing-billing worker", "dps-outbox-relay", "dps-billing-stand-in",
           "dealpricing-dev mailbox", "caddy run --config")


def assert_running(run: MakeRun, expected: tuple[str, ...] = RUNNING) -> None:
    names = " ".join(" ".join(p.cmdline()) for p in run.processes())
    for name in expected:
        assert name in names, f"{name} is not running: {names}"


def admin_key(banner: str) -> str:
    return re.search(r"^   admin API key +(dps_\S+)$", banner, re.MULTILINE).group(1)


def test_the_readme_quickstart_works_against_make_run(first_start, tmp_path):
    run: MakeRun = first_start  # plain `make run`, as the README's first command says
    banner = run.wait_ready()
    ready = time.monotonic()
    began = run.started_at
    assert "admin API key        dps_" in banner
    api = API_LINE.search(banner).group(1)
    assert run.exports().splitlines()[1] == f"export API={api}"  # one address: no other base URL
    with urllib.request.urlopen(api + "/openapi.json", timeout=30) as answer:  # one document, three services
        paths = json.load(answer)["paths"]
    assert {"/pricing-quotes", "/webhook-configs", "/billing-connection/authorize"} <= set(paths)
    script = tmp_path / "quickstart.sh"
    # the README: paste the banner's export lines, then the block, in a shell in the repository's folder;
    # then the block once more, as a user pasting it again does
    script.write_text("set -e\n" + run.exports() + "\n" + quickstart_block() + "\necho 'second paste'\n" + quickstart_block())
    out_path = tmp_path / "quickstart.out"
    with open(out_path, "wb") as out:
        shell = subprocess.Popen(
            ["bash", str(script)], cwd=REPO, env=run.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        assert shell.wait(timeout=240) == 0, out_path.read_text()
        # the block's own lines: the receiver in the background prints a line per delivery in between
        output = "".join(line for line in out_path.read_text().splitlines(keepends=True) if not RECEIVED.match(line))
        first, second = output.split("second paste\n")
        for pasted in (first, second):
            assert '"name":"Demo Sales Co"' in pasted
            assert "\nAPPROVED\n" in pasted
            assert "Billing platform connected\nconnected\n" in pasted
            [review_url] = re.findall(r"^(http://127\.0\.0\.1:\d+/test/quotes/qt_\w+)$", pasted, re.MULTILINE)
            with urllib.request.urlopen(review_url, timeout=10) as page:  # the draft, on the stand-in
                assert page.status == 200 and review_url.rsplit("/", 1)[1] in page.read().decode()
        # the second paste revoked the first's endpoint: one endpoint of the block's is active, on a
        # port of its own, and its receiver verified both of the second paste's events
        made = [c for c in _get(api + "/webhook-configs?limit=500", admin_key(banner))["webhookConfigs"]
                if c["description"] == "README Try-it receiver"]
        [active] = [c for c in made if c["revokedAt"] is None]
        assert len(made) == 2 and made[0]["url"] != made[1]["url"], made
        deadline = time.monotonic() + DELIVERY_SECONDS
        while True:
            deliveries = _get(f"{api}/webhook-configs/{active['id']}/deliveries", admin_key(banner))["deliveries"]
            if {(d["eventType"], d["status"]) for d in deliveries} >= {("quote.approved", "SUCCESS"),
                                                                      ("billing.quote_pushed", "SUCCESS")}:
                break
            assert time.monotonic() < deadline, (deliveries, out_path.read_text(), run.tail())
            time.sleep(0.5)
        assert "verified  quote.approved" in out_path.read_text()
        assert "NOT VERIFIED" not in out_path.read_text()
        # the newcomer's path on this machine (not asserted: timings live in bench/)
        print(f"\nmake run to the banner {ready - began:.0f} s; to the end of the Try-it block {time.monotonic() - began:.0f} s")
    finally:
        os.killpg(shell.pid, signal.SIGKILL)  # the receiver, still listening in the background
    # a failing step stops the block with a clear message (the service's problem document), never a
    # traceback or an endless wait: a wrong key at the first request; step 1 answered with a problem
    # (a receiver URL the dispatcher refuses)
    block = quickstart_block()
    for script, said in (("DPS_KEY=dps_notAKey0000_wrong\n" + block, '"status":401'),
                         (block.replace('"url": "http://', '"url": "ftp://', 1), "no secret in the answer: {")):
        failing = tmp_path / "failing.sh"
        failing.write_text("set -e\n" + run.exports() + "\n" + script)
        stopped = subprocess.run(["bash", str(failing)], cwd=REPO, env=run.env, capture_output=True, text=True,
                                 timeout=60)
        assert stopped.returncode != 0 and "Traceback" not in stopped.stderr, stopped.stderr
        assert said in stopped.stdout + stopped.stderr, (stopped.stdout, stopped.stderr)
        assert "APPROVED" not in stopped.stdout
    # the admin command line finds make run's database and pepper by itself
    admin = subprocess.run(
        [str(REPO / ".venv/bin/dealpricing-admin"), "--json", "orgs", "list"],
        cwd=REPO, env={k: v for k, v in run.env.items() if k not in ("DATABASE_URL", "API_KEY_PEPPER")},
        capture_output=True, text=True, timeout=60,
    )
    assert admin.returncode == 0, admin.stderr
    assert "Demo Sales Co" in admin.stdout
    assert f"using make run's database and pepper from {run.run_dir / 'admin.env'}" in admin.stderr


def _get(url: str, key: str) -> dict:
    with urllib.request.urlopen(urllib.request.Request(url, headers={"x-api-key": key}), timeout=30) as answer:
        return json.load(answer)


def test_one_address_routes_every_operation_to_its_owner_as_the_ingress_does(first_start):
    """Through the proxy, each operation of the merged document ("Try it out" on the reference page)
    is answered by the service whose own document has it: not as any other service (its 404 for a
    route it lacks) nor the proxy itself would answer; a GET as the owner answers it directly. What is
    not routed by the ingress is not routed here. The rate limit counts the client the proxy names
    (never one a client names itself), and a chunked body over 10 MB gets the service's own 413."""
    run: MakeRun = first_start
    banner = run.wait_ready()
    api = API_LINE.search(banner).group(1)
    origin = api.removesuffix("/external/v1")
    key = admin_key(banner)
    merged = document(api + "/openapi.json")
    assert merged["servers"] == [{"url": api}]  # generated clients and Try it out: the one address
    with urllib.request.urlopen(api + "/docs", timeout=30) as page:
        assert page.status == 200 and "text/html" in page.headers["content-type"]
    behind = {name: f"http://127.0.0.1:{run.env[port]}" for name, port in BEHIND.items()}
    owned = {name: set(document(base + "/internal/v1/openapi.json")["paths"]) for name, base in behind.items()}
    behind["console"] = f"http://127.0.0.1:{run.env['CONSOLE_PORT']}"
    not_routed = call(origin, "GET", "/internal/v1/openapi.json", key)
    assert not_routed.status == 404 and b"make run's proxy" in not_routed.body
    checked = []
    for path, method, concrete in operations(merged):
        [owner] = [name for name, paths in owned.items() if path in paths]
        elsewhere = {call(base, method, concrete, key).shape() for name, base in behind.items() if name != owner}
        answer = call(origin, method, concrete, key).shape()  # the only request that reaches the owner
        assert answer not in elsewhere | {not_routed.shape()}, f"{method} {path} did not reach the {owner}: {answer}"
        if method == "GET":
            assert answer == call(behind[owner], method, concrete, key).shape(), f"{method} {path}"
        checked.append(owner)
    assert {owner: checked.count(owner) for owner in owned} == {
        owner: sum(1 for path, _, _ in operations(merged) if path in owned[owner]) for owner in owned}
    assert min(checked.count(owner) for owner in owned) >= 5, checked
    # near misses of the connector's and the dispatcher's routes stay with the api; the rest, nowhere
    for path in ("/external/v1/billing-pushesx", "/external/v1/webhook-event-typesx", "/external/v1/console"):
        assert call(origin, "GET", path, key).shape() == call(behind["api"], "GET", path, key).shape(), path
    for path in ("/healthz", "/metrics", "/internal/v1/key-introspection", "/consolex", "/external/v2/whoami"):
        assert call(origin, "GET", path, key).shape() == not_routed.shape(), path
    assert _client_budgets(origin), "the rate limit did not count each client by the address the proxy saw"
    upload = http.client.HTTPConnection(origin.removeprefix("http://"), timeout=60)
    upload.request("POST", "/external/v1/pricing-quotes", body=(b"x" * 2**20 for _ in range(11)), encode_chunked=True,
                   headers={"x-api-key": key, "content-type": "application/json"})
    too_large = upload.getresponse()
    assert too_large.status == 413 and json.loads(too_large.read())["code"] == "payload_too_large"


def _remaining(origin: str, source: str, claimed: str) -> int:
    """The anonymous budget left after one unauthenticated request from ``source``, which claims to
    forward for ``claimed``."""
    connection = http.client.HTTPConnection(origin.removeprefix("http://"), timeout=30, source_address=(source, 0))
    connection.request("GET", "/external/v1/whoami", headers={"X-Forwarded-For": claimed})
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert answer.status == 401, answer.status
    return int(re.search(r"\br=(\d+)", answer.headers["RateLimit"]).group(1))


def _client_budgets(origin: str) -> bool:
    """Two requests from 127.0.0.2 share a budget whatever X-Forwarded-For they claim; one from
    127.0.0.3 has its own (a window that ends between them: tried again, three times at most)."""
    for attempt in range(3):
        first = _remaining(origin, "127.0.0.2", f"198.51.100.{attempt}")
        second = _remaining(origin, "127.0.0.2", f"203.0.113.{attempt}")
        other = _remaining(origin, "127.0.0.3", f"198.51.100.{attempt}")
        if second == first - 1 and other > second:
            return True
    return False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a test reads the 303 itself


def _redirect(browser: urllib.request.OpenerDirector, request: urllib.request.Request | str) -> str:
    with pytest.raises(urllib.error.HTTPError) as answer:
        browser.open(request, timeout=30)
    assert answer.value.code in (302, 303), answer.value.read()
    return urllib.parse.urljoin(request if isinstance(request, str) else request.full_url, answer.value.headers["location"])


def _page(browser: urllib.request.OpenerDirector, url: str) -> http.client.HTTPResponse:
    """A console page as a browser gets it: a page with action buttons first answers 303 to its own
    address with a view token (``?view=``), which the browser follows."""
    try:
        return browser.open(url, timeout=30)
    except urllib.error.HTTPError as answer:
        viewed = urllib.parse.urljoin(url, answer.headers["location"] or "")
        assert answer.code == 303 and urllib.parse.urlsplit(viewed).path == urllib.parse.urlsplit(url).path, viewed
        assert "view=" in urllib.parse.urlsplit(viewed).query, viewed
        return browser.open(viewed, timeout=30)


def _form_once(page: str) -> str:
    """The form's one-time token (the console does each form's action once)."""
    return re.search(r'<input type="hidden" name="once" value="([^"]+)">', page).group(1)


def _form_token(page: str) -> str:
    return re.search(r'<input type="hidden" name="csrf" value="([0-9a-f]+)">', page).group(1)


def test_the_banner_link_signs_the_demo_admin_in_to_the_console(first_start):
    """The console answers; the banner's link (mailed by the console, caught by the mailbox) opens the
    Sign in page, whose POST starts a session in which the API keys page answers and Connect comes
    back to the console connected; the mailbox page shows the mail; the link works once."""
    run: MakeRun = first_start
    banner = run.wait_ready()
    console = re.search(r"^   settings console +(http://\S+)/ ", banner, re.MULTILINE).group(1)
    mailbox = re.search(r"^   mailbox +(http://\S+)/ ", banner, re.MULTILINE).group(1)
    link = re.search(r"^   sign in as admin +(http://\S+/sign-in/link\?token=\S+)$", banner, re.MULTILINE).group(1)
    assert link.startswith(console + "/sign-in/link?token=")
    assert console == API_LINE.search(banner).group(1).removesuffix("/external/v1") + "/console"  # the one address
    with urllib.request.urlopen(mailbox + "/", timeout=10) as page:  # the mail, its link among the links
        assert f'<a href="{html.escape(link)}">' in page.read().decode()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirect)
    with browser.open(link, timeout=10) as page:  # opening the link uses nothing up
        form = page.read().decode()
    assert 'action="/console/sign-in/link"' in form
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["token"][0]
    sign_in = urllib.request.Request(console + "/sign-in/link", method="POST", data=urllib.parse.urlencode(
        {"csrf": _form_token(form), "token": token}).encode())
    with pytest.raises(urllib.error.HTTPError) as redirected:
        browser.open(sign_in, timeout=30)
    assert redirected.value.code == 303 and redirected.value.headers["location"].endswith("/console")
    with browser.open(console + "/api-keys", timeout=30) as keys:
        assert keys.status == 200
        assert "<h1>API keys</h1>" in keys.read().decode()
    # every page and file the console's home links to loads through the proxy (the one address)
    with browser.open(console, timeout=30) as home:
        linked = set(re.findall(r'(?:href|src)="(/console[^"#?]*)"', home.read().decode()))
    assert {"/console/api-keys", "/console/static/console.css"} <= linked, linked
    for path in sorted(linked):
        with _page(browser, urllib.parse.urljoin(console, path)) as page:
            assert page.status == 200, path
    # Connect: the connector's flow (CONSOLE_URL is the console's) ends back on the console's page,
    # from "not connected": the README's quickstart, earlier on this running system, connects the demo
    # organization (the one-address walk's DELETE undid that only by chance, when it ran to its end)
    api = API_LINE.search(banner).group(1)
    assert call(api, "DELETE", "/billing-connection", admin_key(banner)).status in (204, 404)
    with _page(browser, console + "/billing") as page:
        form = page.read().decode()
        connect = urllib.request.Request(console + "/billing/connect", method="POST", data=urllib.parse.urlencode(
            {"csrf": _form_token(form), "once": _form_once(form)}).encode())
    with browser.open(_redirect(browser, connect), timeout=30) as onwards:  # the link to the connector's start URL
        start = html.unescape(re.search(r'href="([^"]+)">Continue to the billing platform<', onwards.read().decode()).group(1))
    install = _redirect(browser, start)  # the stand-in's install page (the start URL's cookie is set)
    page_url, query = install.split("?", 1)
    callback = _redirect(browser, urllib.request.Request(page_url, data=(query + "&decision=install").encode()))
    assert _redirect(browser, callback) == console + "/billing?billing=connected"
    with pytest.raises(urllib.error.HTTPError) as used:  # once only
        urllib.request.urlopen(link, timeout=10)
    assert used.value.code == 400


def test_postgres_answers_no_tcp_port(first_start):
    """The embedded server listens on its socket only: nothing to clash with a local PostgreSQL."""
    run: MakeRun = first_start
    run.wait_ready()
    [postmaster] = [p for p in run.processes() if p.name() == "postgres" and "-D" in p.cmdline()]
    assert not [c for c in postmaster.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN]


def test_the_first_start_runs_every_process(first_start):
    first_start.wait_ready()
    assert_running(first_start)


def test_ctrl_c_to_the_group_stops_the_first_start_and_leaves_no_process(first_start):
    run: MakeRun = first_start
    run.wait_ready()
    assert run.make is not None and run.make.poll() is None, "the first start stopped before its Ctrl-C"
    run.signal_group(signal.SIGINT)  # Ctrl-C in the terminal
    run.wait_gone()
    assert "Stopping PostgreSQL..." in run.output
    # nothing failed, so nothing says so: no traceback (gevent's SystemExit of the workers, the
    # subscriber's atexit hook cut short), no "Exception ignored"
    assert "Traceback" not in run.output and "Exception ignored" not in run.output, run.tail(200)
    assert not (run.run_dir / "admin.env").exists()
    assert run.make.wait(timeout=10) is not None


def stopped(run: MakeRun) -> MakeRun:
    """``run``, stopped with Ctrl-C unless it is already: a later start must have the folder to itself
    (even when the Ctrl-C test is not among those selected)."""
    if run.make is not None and run.make.poll() is None:
        run.signal_group(signal.SIGINT)
        run.wait_gone()
    return run


def _group_sigterm(run: MakeRun) -> None:
    run.signal_group(signal.SIGTERM)


def _make_sigterm(run: MakeRun) -> None:
    assert run.make is not None
    run.make.send_signal(signal.SIGTERM)


def _runner_sigterm(run: MakeRun) -> None:
    run.runner().send_signal(signal.SIGTERM)


def _runner_sigkill(run: MakeRun) -> None:
    run.runner().kill()  # no clean-up at all: the parent-death signal is all that stops the rest


def stop_leaves_no_process(run: MakeRun, stop) -> None:
    stop(run)
    run.wait_gone()
    assert run.make is not None and run.make.wait(timeout=10) is not None


@pytest.mark.parametrize(
    "stop",
    [_make_sigterm, _runner_sigterm, _runner_sigkill],
    ids=["sigterm-to-make", "sigterm-to-the-runner", "sigkill-to-the-runner"],
)
def test_a_later_start_shows_the_same_admin_key_and_the_stop_leaves_no_process(make_run, first_start, stop):
    """Each later start in the folder shows the first start's admin key and leaves one live demo
    admin key; it also asks for both relays' metrics servers (one port each: RELAY_METRICS_PORT alone
    once stopped everything, both relays taking it), which listen on HOST only. Then it is stopped
    the way the test's id says, and no process is left."""
    first_key = admin_key(stopped(first_start).wait_ready())
    relay_ports = {"RELAY_METRICS_PORT": free_port(), "BILLING_RELAY_METRICS_PORT": free_port()}
    run: MakeRun = make_run(**{name: str(port) for name, port in relay_ports.items()})
    banner = run.wait_ready()
    assert_running(run)
    for port in relay_ports.values():
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as health:
            assert health.status == 200
        [address] = {c.laddr.ip for c in psutil.net_connections("tcp")
                     if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN}
        assert address == "127.0.0.1"
    key = admin_key(banner)
    api = API_LINE.search(banner).group(1)
    with urllib.request.urlopen(urllib.request.Request(api + "/whoami", headers={"x-api-key": key}), timeout=30) as me:
        assert me.status == 200
    organization = re.search(r"^   organization +.* \((\S+)\)$", banner, re.MULTILINE).group(1)
    listed = subprocess.run(
        [str(REPO / ".venv/bin/dealpricing-admin"), "--json", "keys", "list", "--org", organization],
        cwd=REPO, env=run.env, capture_output=True, text=True, timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    stop_leaves_no_process(run, stop)
    assert key == first_key
    live = [k for k in json.loads(listed.stdout)["keys"] if k["status"] == "active" and k["name"].startswith("make run ")]
    assert len(live) == 1 and key.startswith(live[0]["prefix"] + "_"), live


def test_a_sigterm_to_the_group_while_it_starts_leaves_no_process(make_run):
    run: MakeRun = make_run()
    run.wait_for("Seeding the demo organization")
    assert any(p.name() == "postgres" for p in run.processes())
    run.signal_group(signal.SIGTERM)
    run.wait_gone()
    assert "Stopping PostgreSQL..." in run.output


def test_with_database_url_amqp_url_and_redis_url_it_uses_those_servers_and_sigterm_to_the_group_stops_it(make_run):
    """The same command on the machine's PostgreSQL (a fresh database per service), RabbitMQ (a fresh
    virtual host) and Redis: the seed's events reach the broker through the api's relay; every other
    process runs, no PostgreSQL of its own; a SIGTERM to the group leaves no process (with the embedded
    PostgreSQL, the same signal is the interrupted start's)."""
    import psycopg

    from dps_testing.services import fresh_database, fresh_vhost

    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    with fresh_database("dps_make_run_api") as api_url, fresh_database("dps_make_run_wh") as webhooks_url, \
            fresh_database("dps_make_run_bc") as billing_url, fresh_database("dps_make_run_co") as console_url, \
            fresh_vhost("dps_make_run") as amqp_url:
        run: MakeRun = make_run(DATABASE_URL=api_url, WEBHOOKS_DATABASE_URL=webhooks_url, BILLING_DATABASE_URL=billing_url,
                                CONSOLE_DATABASE_URL=console_url, AMQP_URL=amqp_url, REDIS_URL=redis_url)
        try:
            banner = run.wait_ready()
            assert "PostgreSQL           DATABASE_URL's server" in banner
            assert "events               amqp://" in banner and "filesystem://" not in banner
            assert "rate limits          counted in redis://" in banner and "embedded" not in banner.split("rate limits")[1].splitlines()[0]
            deadline = time.monotonic() + 60
            while True:
                with psycopg.connect(api_url) as db:
                    total, unpublished = db.execute(
                        "SELECT count(*), count(*) FILTER (WHERE published_at IS NULL) FROM outbox_events"
                    ).fetchone()
                if total and not unpublished:
                    break  # every event of the seed confirmed by the vhost's broker
                assert time.monotonic() < deadline, f"{unpublished} of {total} events unpublished\n{run.tail()}"
                time.sleep(0.5)
            for url in (webhooks_url, billing_url, console_url):
                with psycopg.connect(url) as db:
                    assert db.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)
            assert_running(run, RUNNING[1:])
            assert not [p for p in run.processes() if p.name() == "postgres"]
            stop_leaves_no_process(run, _group_sigterm)
        finally:
            stopped(run)  # before the databases are dropped
