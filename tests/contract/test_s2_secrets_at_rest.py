"""Nothing secret is stored in plaintext, in any table of any service's database (idempotency
records included). The suite runs every operation that shows a secret, as a client and an operator
would: webhook configs created and rotated with and without an ``Idempotency-Key`` (and replayed),
a test delivery signed with the secret, API keys issued and rotated through the admin command line
and (where the api serves them) through ``POST /api-keys`` and its rotate with a console credential,
a billing connection made through the marketplace (OAuth code, access and refresh tokens). Then
every text, bytea and JSON column of every table of the api's, the dispatcher's and the connector's
databases is searched for each secret it was shown, and for the services' configured secrets:
none is found.

A tripwire keeps the list whole: every operation whose OpenAPI document says it returns a secret
(``secret_fields``: its answer is ``{Model}`` or ``{Model}Replayed``) must be exercised here.

Neither is any secret written in a log: every line every process of the stack wrote during the run
(the api, the dispatcher, the connector, their workers and relays, the servers other modules
started, the billing platform stand-in and the webhook receiver: ``stack_logs``) is searched too.
Both scans look for every secret the whole run was shown (``issued_secrets``: each API key and
console credential, signing secret, billing start ticket, OAuth state and code, the connect flow's
nonce cookie), the stand-in's OAuth tokens (what its token endpoint issued) and the
services' configured secrets, so this module runs after every other module of the suite
(``conftest.pytest_collection_modifyitems``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from uuid import uuid4

import pytest
from contract_billing import SECRET_KEY, WEBHOOK_SECRET

from dps_testing.issued_secrets import (
    API_KEY,
    BILLING_TICKET,
    CONSOLE_CREDENTIAL,
    COOKIE,
    OAUTH_CODE,
    OAUTH_STATE,
    SIGNING_SECRET,
    IssuedSecrets,
)
from dps_testing.secrets_at_rest import scan_for_secrets
from dps_testing.stack_logs import scan_logs

from dps_billing_stand_in import BillingStandIn

import contract_data as data

ROTATE = "/webhook-configs/{webhook_config_id}/rotate-secret"
API_KEYS = {("post", "/api-keys"), ("post", "/api-keys/{key_id}/rotate")}


@dataclass
class Shown:
    secrets: dict[str, str] = field(default_factory=dict)  # label -> the secret as shown
    exercised: set[tuple[str, str]] = field(default_factory=set)  # the documented operations run


def keyed(key: str) -> dict[str, str]:
    return {"Idempotency-Key": key}


def api_key_secrets(label: str, key: str) -> dict[str, str]:
    """The whole key and its secret part (``dps_<id>_<secret>``: the id alone is no secret)."""
    return {label: key, f"{label} (secret part)": key.split("_", 2)[2]}


def secret_operations(document: dict) -> set[tuple[str, str]]:
    return {
        (method, path)
        for path, item in document["paths"].items()
        for method, op in item.items()
        for answer in op.get("responses", {}).values()
        for schema in [answer.get("content", {}).get("application/json", {}).get("schema", {})]
        if any(ref.get("$ref", "").endswith("Replayed") for ref in schema.get("oneOf", []))
    }


def own_document(api) -> dict:
    """The api's own document: the public one leaves out the console's operations (``/api-keys``)."""
    return api.ok("GET", "/internal/v1/openapi.json", None, absolute=True, status=200)


def replays_no_secret(answer) -> None:
    assert answer.headers["Idempotent-Replayed"] == "true", answer.text
    assert answer.json()["secret"] is None and answer.json()["secretShownOnce"]["renewal"]


def exercise_api_keys(api, org, server_env, shown: Shown) -> None:
    """``POST /api-keys`` and its rotate, as the settings console calls them: with the credential
    the api issues for a signed-in person (itself a secret), keyed and replayed."""
    signed_in = api.session.post(
        f"{api.origin}/internal/v1/console/credentials",
        json={"email": org.admin.email, "sessionId": str(uuid4())},
        headers={"Authorization": f"Bearer {server_env['CONSOLE_API_TOKEN']}"},
        verify=api.ca_file,
        timeout=60,
    )
    assert signed_in.status_code == 201, signed_in.text
    credential = signed_in.json()["credential"]
    shown.secrets.update(api_key_secrets("console credential", credential))
    body = {"name": data.unique("Secrets at rest"), "role": "user"}
    key = data.unique("secrets-api-key")
    created = api.ok("POST", "/api-keys", credential, json=body, headers=keyed(key), status=201)
    replays_no_secret(api.post("/api-keys", credential, json=body, headers=keyed(key)))
    shown.secrets.update(api_key_secrets("api key (POST /api-keys)", created["secret"]))
    rotate_path, key = f"/api-keys/{created['id']}/rotate", data.unique("secrets-api-key-rotate")
    rotated = api.ok("POST", rotate_path, credential, headers=keyed(key), status=200)
    replays_no_secret(api.post(rotate_path, credential, headers=keyed(key)))
    shown.secrets.update(api_key_secrets("api key (rotate)", rotated["secret"]))
    shown.exercised |= API_KEYS


@pytest.fixture(scope="module")
def shown(api, webhooks, billing, admin, make_org, server_env) -> Shown:
    """Run every secret-bearing operation once; every secret shown, by label."""
    org = make_org("Secrets At Rest")
    shown = Shown()
    secrets = shown.secrets
    hooks = webhooks.hooks

    plain = webhooks.register(org)
    secrets["webhook secret (create)"] = plain.secret
    body = {"url": webhooks.url(webhooks.new_path()), "eventTypes": ["quote.approved"]}
    create_key = data.unique("secrets-create")
    created = hooks.ok("POST", "/webhook-configs", org.admin, json=body, headers=keyed(create_key), status=201)
    replays_no_secret(hooks.post("/webhook-configs", org.admin, json=body, headers=keyed(create_key)))
    secrets["webhook secret (keyed create)"] = created["secret"]

    rotate_path = f"/webhook-configs/{plain.id}/rotate-secret"
    secrets["webhook secret (rotate)"] = hooks.ok("POST", rotate_path, org.admin, status=200)["secret"]
    rotate_key = data.unique("secrets-rotate")
    rotated = hooks.ok("POST", rotate_path, org.admin, headers=keyed(rotate_key), status=200)
    replays_no_secret(hooks.post(rotate_path, org.admin, headers=keyed(rotate_key)))
    secrets["webhook secret (keyed rotate)"] = rotated["secret"]
    plain.record["secret"] = rotated["secret"]
    webhooks.send_test(plain)  # a delivery signed with the secret, its attempt recorded
    webhooks.wait_deliveries(plain, 1, "SUCCESS")
    shown.exercised |= {("post", "/webhook-configs"), ("post", ROTATE)}

    for role, member in (("admin", org.admin), ("user", org.user), ("viewer", org.viewer)):
        secrets.update(api_key_secrets(f"api key ({role})", member.key))
    member = org.member("admin", "rotated@secrets.example")
    secrets.update(api_key_secrets("api key (created)", member.key))
    secrets.update(api_key_secrets("api key (rotated)", admin.rotate_key(member.key_row_id)["key"]))
    if API_KEYS <= secret_operations(own_document(api)):
        exercise_api_keys(api, org, server_env, shown)

    before = len(billing.stand_in.requests("/v1/oauth/token", method="POST"))
    billing.connect(org)
    [exchange] = billing.stand_in.requests("/v1/oauth/token", method="POST")[before:]
    assert exchange.status == 200, exchange.response
    secrets["oauth code"] = exchange.form["code"]
    secrets["oauth access token"] = exchange.response["access_token"]
    secrets["oauth refresh token"] = exchange.response["refresh_token"]
    webhooks.revoke_registered()
    billing.disconnect(org)
    return shown


def test_every_operation_that_returns_a_secret_is_exercised_here(shown, api, webhook_api, billing):
    documents = [own_document(api), webhook_api.hooks.get("/openapi.json").json(), billing.connector.document]
    documented = set().union(*(secret_operations(document) for document in documents))
    assert ("post", "/webhook-configs") in documented
    missing = sorted(documented - shown.exercised)
    assert not missing, f"returns a secret, not exercised by this test: {missing}"


# every process of the stack that writes a log (other modules' servers add theirs)
LOGGING_PROCESSES = (
    "api", "api-outbox-relay", "webhook-dispatcher", "webhook-worker", "billing-connector", "billing-worker",
    "billing-outbox-relay", "billing-platform-stand-in", "webhook-receiver",
)
CONFIGURED = "configured secret"
ACCESS_TOKEN, REFRESH_TOKEN = "OAuth access token (stand-in)", "OAuth refresh token (stand-in)"
SIGNATURE = "webhook signature"


def stand_in_tokens(stand_in: BillingStandIn, issued: IssuedSecrets) -> None:
    """What the platform's token endpoint issued in the whole run (codes exchanged, access and
    refresh tokens, refreshes included), from the stand-in's recordings."""
    for exchange in stand_in.requests("/v1/oauth/token", method="POST"):
        form = exchange.form if isinstance(exchange.form, dict) else {}
        issued.add(OAUTH_CODE, form.get("code"))
        issued.add(REFRESH_TOKEN, form.get("refresh_token"))
        if isinstance(exchange.response, dict):
            issued.add(ACCESS_TOKEN, exchange.response.get("access_token"))
            issued.add(REFRESH_TOKEN, exchange.response.get("refresh_token"))


@pytest.fixture(scope="module")
def every_secret(shown, issued_secrets, billing, server_env, webhooks_env, billing_env) -> dict[str, str]:
    """Label ("<kind> #n") -> secret: all the run was shown, the stand-in's tokens, the configured ones."""
    stand_in_tokens(billing.stand_in, issued_secrets)
    configured = {
        name: env[name]
        for env, names in (
            (server_env, ("API_KEY_PEPPER", "CURSOR_SECRET", "INTERNAL_API_TOKEN", "CONSOLE_API_TOKEN")),
            (webhooks_env, ("WEBHOOK_SECRET_KEY",)),
            (billing_env, ("BILLING_TOKEN_KEY", "BILLING_STATE_SECRET", "BILLING_SECRET_KEY", "BILLING_WEBHOOK_SECRET")),
        )
        for name in names
    }
    assert configured["BILLING_SECRET_KEY"] == SECRET_KEY and configured["BILLING_WEBHOOK_SECRET"] == WEBHOOK_SECRET
    return {**issued_secrets.labelled(), **{f"{CONFIGURED} {name}": value for name, value in configured.items()}}


def kind_of(label: str) -> str:
    return label.rsplit(" #", 1)[0] if " #" in label else CONFIGURED


def per_kind(labels) -> Counter:
    return Counter(kind_of(label) for label in labels)


def test_the_scan_runs_after_every_other_contract_test(request):
    items = request.session.items
    later = [item.nodeid for item in items[items.index(request.node) + 1:]
             if item.path.parent == request.node.path.parent and item.path != request.node.path]
    assert not later, f"contract tests after the secrets scan (their secrets would go unsearched): {later}"


def test_the_run_was_shown_secrets_of_every_kind(shown, every_secret):
    kinds = per_kind(every_secret)
    gathered = set(every_secret.values())
    missed = [label for label, secret in shown.secrets.items() if not any(part in secret for part in gathered)]
    assert shown.secrets and not missed, f"shown to this module, not gathered: {missed}"
    for kind in (API_KEY, CONSOLE_CREDENTIAL, SIGNING_SECRET, BILLING_TICKET, OAUTH_STATE, OAUTH_CODE, COOKIE,
                 ACCESS_TOKEN, REFRESH_TOKEN, CONFIGURED):
        assert kinds[kind] > 0, f"no {kind} gathered: {dict(kinds)}"


def test_no_secret_is_stored_in_any_table_of_any_service(
    every_secret, database_url, webhooks_database_url, billing_database_url, capsys
):
    databases = {"api": database_url, "dispatcher": webhooks_database_url, "connector": billing_database_url}
    report = scan_for_secrets(databases, every_secret)
    with capsys.disabled():
        print(f"\nsecrets at rest: {report.summary()}")
        print(f"  searched by kind: {dict(sorted(per_kind(every_secret).items()))}")
        print(f"  found by kind: {dict(per_kind(finding.secret for finding in report.found))}")
    assert report.tables >= 20 and report.rows > 0 and report.secrets == len(every_secret)
    assert report.found == []


def test_no_secret_is_written_in_any_log_line_of_any_process(every_secret, webhook_receiver, stack_logs, capsys):
    signatures = {f"{SIGNATURE} #{n}": signature for n, request in enumerate(webhook_receiver.received, 1)
                  for signature in request.headers.get("webhook-signature", "").split() if len(signature) >= 8}
    searched = {**every_secret, **signatures}
    report = scan_logs(stack_logs.files(), searched)
    with capsys.disabled():
        print(f"\nsecrets in logs: {report.summary()}")
        print(f"  lines by file: {report.files}")
        print(f"  searched by kind: {dict(sorted(per_kind(searched).items()))}")
        print(f"  found by kind: {dict(per_kind(finding.secret for finding in report.found))}")
    missing = [name for name in LOGGING_PROCESSES if not report.files.get(f"{name}.log")]
    assert not missing, f"no log lines from {missing}: {report.files}"
    assert report.found == [], "\n".join(f"{f.file}:{f.line}: {f.secret}" for f in report.found[:50])
