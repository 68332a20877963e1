"""Organizations, users and keys made the way an operator makes them, for the black-box suites:
the ``dealpricing-admin`` command line against the same database and pepper as the server.

The command is the api's public one, the ``dealpricing-admin`` console script: found through its
entry point (``importlib.metadata``), never the module it lives in, and called in the test process
as the script calls it, with the server's environment and its own output (``environ``, ``stdout``,
``stderr``): a suite makes some 200 of these, and a fresh interpreter for each (over a second of
imports) was the largest part of the contract suite's time. The installed script itself is run by
``make run``'s tests."""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from dps_testing.issued_secrets import API_KEY, IssuedSecrets


@dataclass
class Member:
    """A user of an organization and the API key issued to it (``key`` is the full secret string)."""

    user_id: str
    email: str
    role: str
    key: str
    key_row_id: str

    @property
    def headers(self) -> dict[str, str]:
        return {"x-api-key": self.key}


@dataclass
class Org:
    id: str
    name: str
    admin: Member
    user: Member
    viewer: Member
    add_member: Callable[[str, str], Member] = field(repr=False)

    def member(self, role: str, email: str) -> Member:
        """Another user of this organization with a key of ``role``."""
        return self.add_member(role, email)


ROLE_LABELS = {"admin": "admin", "user": "user", "view only": "viewer"}
COMMAND = "dealpricing-admin"


@cache
def admin_command() -> Callable[..., int]:
    """What the ``dealpricing-admin`` script runs: ``(argv, *, environ, stdout, stderr) -> exit code``."""
    found = entry_points(group="console_scripts", name=COMMAND)
    if not found:
        raise LookupError(f"no {COMMAND} console script is installed (the api's distribution, dps-api)")
    (script,) = found
    command: Callable[..., int] = script.load()
    return command


class Admin:
    """``issued``, when given, is told every API key the command line prints."""

    def __init__(self, env: dict[str, str], issued: IssuedSecrets | None = None):
        self._env = env
        self._issued = issued

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``dealpricing-admin *args``: its exit code and what it printed."""
        out, err = io.StringIO(), io.StringIO()
        code = admin_command()(list(args), environ=self._env, stdout=out, stderr=err)
        return subprocess.CompletedProcess([COMMAND, *args], code, out.getvalue(), err.getvalue())

    def migrate(self) -> None:
        """``dealpricing-admin migrate``: the api's database to head."""
        done = self.run("migrate")
        assert done.returncode == 0, f"{COMMAND} migrate -> {done.returncode}: {done.stderr}"

    def json(self, *args: str) -> dict[str, Any]:
        done = self.run(*args, "--json")
        assert done.returncode == 0, f"dealpricing-admin {' '.join(args)} -> {done.returncode}: {done.stderr}"
        answer: dict[str, Any] = json.loads(done.stdout)
        if self._issued is not None:
            self._issued.add_api_key(API_KEY, answer.get("key"))
        return answer

    def create_org(self, name: str) -> dict[str, Any]:
        return self.json("orgs", "create", "--name", name)

    def create_user(self, org_id: str, email: str, name: str, role: str) -> dict[str, Any]:
        return self.json("users", "create", "--org", org_id, "--email", email, "--name", name, "--role", role)

    def create_key(self, org_id: str, user_id: str, role: str, name: str) -> dict[str, Any]:
        return self.json("keys", "create", "--org", org_id, "--user", user_id, "--role", role, "--name", name)

    def rotate_key(self, key_row_id: str) -> dict[str, Any]:
        return self.json("keys", "rotate", "--key", key_row_id)

    def revoke_key(self, key_row_id: str) -> None:
        done = self.run("keys", "revoke", "--key", key_row_id)
        assert done.returncode == 0, f"dealpricing-admin keys revoke -> {done.returncode}: {done.stderr}"

    def member(self, org_id: str, role: str, email: str) -> Member:
        """A user of the organization with a key of the same role."""
        user = self.create_user(org_id, email, email.split("@")[0], role)
        key = self.create_key(org_id, user["id"], role, f"{email} integration")
        assert key["key"].startswith("dps_")
        return Member(user["id"], email, role, key["key"], key["id"])

    def organization(self, name: str) -> Org:
        """An organization with one admin, one user and one view-only member, each with a key."""
        org = self.create_org(name)
        slug = name.lower().replace(" ", "-")
        with ThreadPoolExecutor(max_workers=3) as pool:
            members = dict(
                zip(
                    ROLE_LABELS.values(),
                    pool.map(lambda role: self.member(org["id"], role, f"{ROLE_LABELS[role]}@{slug}.example"), ROLE_LABELS),
                )
            )
        return Org(
            org["id"], org["name"], members["admin"], members["user"], members["viewer"],
            add_member=lambda role, email: self.member(org["id"], role, email),
        )
