"""``dealpricing-admin`` in-process against the test database: what it writes, the keys it issues
working (and stopping) through the app, and expected failures exiting 2 with one line on stderr."""

from __future__ import annotations

import json
import secrets
import uuid

import falcon.testing
import pytest

from dps_common.db import Transactions

from dps_api.cli import main
from dps_api.composition import build_http


@pytest.fixture
def admin_env(monkeypatch, settings):
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("API_KEY_PEPPER", settings.api_key_pepper.decode())


@pytest.fixture
def api(settings, engine):
    """The app over the same database, without a key cache, so CLI changes show at once."""
    tx = Transactions.for_engine(engine)
    yield falcon.testing.TestClient(build_http(settings.model_copy(update={"key_cache_ttl_seconds": 0}), tx=tx))
    tx.dispose()


def run_json(capsys, *argv: str):
    capsys.readouterr()
    assert main(["--json", *argv]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def fails(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.err


def whoami(api, key: str) -> int:
    return api.simulate_get("/external/v1/whoami", headers={"x-api-key": key}).status_code


@pytest.fixture
def org_id(admin_env, capsys) -> str:
    org, _ = run_json(capsys, "orgs", "create", "--name", f"CLI Org {secrets.token_hex(3)}")
    return org["id"]


@pytest.fixture
def user_id(org_id, capsys) -> str:
    user, _ = run_json(capsys, "users", "create", "--org", org_id, "--email", "Ops@Example.com", "--name", "Ops", "--role", "admin")
    return user["id"]


def test_orgs_and_users_are_created_and_listed(admin_env, capsys):
    name = f"CLI Org {secrets.token_hex(3)}"
    org, _ = run_json(capsys, "orgs", "create", "--name", name)
    assert org["name"] == name and uuid.UUID(org["id"]) and org["createdAt"]
    listed, _ = run_json(capsys, "orgs", "list")
    assert {"id": org["id"], "name": name} in [{"id": o["id"], "name": o["name"]} for o in listed["organizations"]]

    user, _ = run_json(capsys, "users", "create", "--org", org["id"], "--email", "v@x.example", "--name", "Vi", "--role", "view_only")
    assert (user["role"], user["email"], user["organizationId"]) == ("view only", "v@x.example", org["id"])
    users, _ = run_json(capsys, "users", "list", "--org", org["id"])
    assert [u["id"] for u in users["users"]] == [user["id"]]

    assert main(["users", "list", "--org", org["id"]]) == 0  # the table for people
    table = capsys.readouterr().out
    assert "v@x.example" in table and "view only" in table


def test_a_key_is_shown_once_works_rotates_and_revokes(org_id, user_id, api, capsys):
    issued, warning = run_json(capsys, "keys", "create", "--org", org_id, "--user", user_id, "--role", "user", "--name", "CRM sync")
    assert "cannot be shown again" in warning
    assert issued["key"].startswith(issued["prefix"] + "_") and issued["role"] == "user"
    assert api.simulate_get("/external/v1/whoami", headers={"x-api-key": issued["key"]}).json["organization"]["id"] == org_id

    listed, _ = run_json(capsys, "keys", "list", "--org", org_id)
    (row,) = listed["keys"]
    assert (row["id"], row["name"], row["role"], row["userId"], row["prefix"], row["status"], row["kind"]) == (
        issued["id"], "CRM sync", "user", user_id, issued["prefix"], "active", "integration"
    )
    assert row["expiresAt"] is None
    assert row["createdAt"] and row["lastUsedAt"]  # the app recorded the use
    # the secret is what follows the prefix (it may itself contain "_")
    assert "key" not in row and issued["key"].removeprefix(issued["prefix"] + "_") not in json.dumps(listed)

    rotated, warning = run_json(capsys, "keys", "rotate", "--key", issued["id"])
    assert "cannot be shown again" in warning and rotated["id"] == issued["id"] and rotated["key"] != issued["key"]
    assert (whoami(api, issued["key"]), whoami(api, rotated["key"])) == (401, 200)

    revoked, _ = run_json(capsys, "keys", "revoke", "--key", issued["id"])
    assert revoked == {"id": issued["id"], "status": "revoked"}
    assert whoami(api, rotated["key"]) == 401
    listed, _ = run_json(capsys, "keys", "list", "--org", org_id)
    assert [k["status"] for k in listed["keys"]] == ["revoked"]
    assert "Active API key not found" in fails(capsys, "keys", "rotate", "--key", issued["id"])

    assert main(["keys", "list", "--org", org_id]) == 0
    table = capsys.readouterr().out
    assert "CRM sync" in table and rotated["prefix"] in table and rotated["key"] not in table


def test_unknown_organization_user_and_key_exit_2(org_id, user_id, capsys):
    unknown = str(uuid.uuid4())
    assert "Organization not found" in fails(capsys, "users", "create", "--org", unknown, "--email", "a@b.example", "--name", "A", "--role", "user")
    assert "Organization not found" in fails(capsys, "users", "list", "--org", unknown)
    assert "Organization not found" in fails(capsys, "keys", "list", "--org", unknown)
    assert "User not found" in fails(capsys, "keys", "create", "--org", org_id, "--user", unknown, "--role", "user", "--name", "k")
    assert "API key not found" in fails(capsys, "keys", "revoke", "--key", unknown)
    assert "already exists" in fails(capsys, "users", "create", "--org", org_id, "--email", "ops@example.com", "--name", "Ops", "--role", "user")


def test_a_user_of_another_organization_cannot_get_a_key_there(org_id, user_id, capsys):
    other, _ = run_json(capsys, "orgs", "create", "--name", "Elsewhere")
    err = fails(capsys, "keys", "create", "--org", other["id"], "--user", user_id, "--role", "admin", "--name", "k")
    assert "User not found" in err


def test_bad_role_and_malformed_input_exit_2(org_id, user_id, capsys):
    err = fails(capsys, "keys", "create", "--org", org_id, "--user", user_id, "--role", "owner", "--name", "k")
    assert "role must be one of: view only, user, admin" in err
    assert "not an id" in fails(capsys, "users", "list", "--org", "not-a-uuid")
    assert "not an email address" in fails(capsys, "users", "create", "--org", org_id, "--email", "nope", "--name", "N", "--role", "user")
    assert "--name" in fails(capsys, "orgs", "create")
    assert "must be 1 to 200 characters" in fails(capsys, "orgs", "create", "--name", "  ")


def test_missing_configuration_is_named(monkeypatch, capsys):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("API_KEY_PEPPER", "short")
    err = fails(capsys, "orgs", "list")
    assert "DATABASE_URL is required" in err and "API_KEY_PEPPER must be at least 32 characters" in err


def test_migrate_upgrades_to_head_and_is_repeatable(admin_env, capsys):
    assert main(["migrate"]) == 0
    assert "migrated" in capsys.readouterr().out.lower()
    result, _ = run_json(capsys, "migrate")
    assert result == {"revision": "head"}


def test_rotate_and_revoke_take_the_printed_prefix_too(org_id, user_id, api, capsys):
    issued, _ = run_json(capsys, "keys", "create", "--org", org_id, "--user", user_id, "--role", "user", "--name", "by prefix")
    rotated, _ = run_json(capsys, "keys", "rotate", "--key", issued["prefix"])
    assert rotated["id"] == issued["id"] and rotated["prefix"] != issued["prefix"]
    assert (whoami(api, issued["key"]), whoami(api, rotated["key"])) == (401, 200)
    assert f"API key with prefix {issued['prefix']} not found" in fails(capsys, "keys", "revoke", "--key", issued["prefix"])
    revoked, _ = run_json(capsys, "keys", "revoke", "--key", rotated["prefix"])
    assert revoked == {"id": issued["id"], "status": "revoked"}
    assert whoami(api, rotated["key"]) == 401
    assert "not a key id (UUID) or a key prefix" in fails(capsys, "keys", "revoke", "--key", rotated["key"])


def test_a_wrong_role_is_refused_before_connecting_to_the_database(monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/nowhere")  # nothing listens there
    monkeypatch.setenv("API_KEY_PEPPER", "p" * 40)
    org, user = str(uuid.uuid4()), str(uuid.uuid4())
    err = fails(capsys, "keys", "create", "--org", org, "--user", user, "--role", "owner", "--name", "k")
    assert "role must be one of: view only, user, admin (got 'owner')" in err and "cannot reach" not in err
    err = fails(capsys, "users", "create", "--org", org, "--email", "a@b.example", "--name", "A", "--role", "boss")
    assert "role must be one of" in err and "cannot reach" not in err


def test_the_help_says_where_it_finds_make_runs_database(capsys):
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Without DATABASE_URL, while `make run` runs, it uses make run's database and pepper from its .run/admin.env" in text
