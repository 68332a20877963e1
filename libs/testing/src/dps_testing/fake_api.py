"""A stand-in for the api's internal HTTP contract, served on a real socket: key introspection
(``POST /internal/v1/key-introspection``) and quote snapshots
(``GET /internal/v1/organizations/{org}/pricing-quotes/{quote}/snapshot``), answering from what the
test registered. Both check the internal bearer token, as the api does.

For the suites whose tests only need keys that the api accepts (the billing connector's and the
webhook dispatcher's HTTP tests): no api process, no api database. What the real api does with keys
(revocation, rotation, its cache) is tested against a real one (the dispatcher's integration
``test_key_revocation.py``, the contract suite)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from uuid import UUID, uuid4

from werkzeug.routing import Map, Rule
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from dps_common.auth.introspection import principal_to_json
from dps_common.auth.keys import format_key, generate_key_id, generate_secret
from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_testing import provisioning

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment


class _Quiet(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class Snapshot(Protocol):
    """What the fake serves as a quote snapshot (the connector's ``QuoteSnapshot``)."""

    @property
    def organization_id(self) -> UUID: ...

    @property
    def id(self) -> UUID: ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Member:
    key: str
    principal: Principal

    @property
    def user_id(self) -> UUID:
        return self.principal.user_id


@dataclass(frozen=True)
class FakeOrg:
    id: UUID
    admin: Member
    user: Member
    other_user: Member
    viewer: Member


class FakeApi:
    def __init__(self, token: str):
        self._token = token
        self._keys: dict[str, Principal] = {}
        self._snapshots: dict[tuple[UUID, UUID], Snapshot] = {}
        self._lock = threading.Lock()
        self.snapshot_reads = 0
        self._urls = Map([
            Rule("/internal/v1/key-introspection", methods=["POST"], endpoint="introspect"),
            Rule("/internal/v1/organizations/<org>/pricing-quotes/<quote>/snapshot", methods=["GET"],
                 endpoint="snapshot"),
        ])
        self._server: BaseWSGIServer = make_server("127.0.0.1", 0, self, threaded=True, request_handler=_Quiet)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def member(self, organization_id: UUID, role: Role, user_id: UUID | None = None, name: str = "Test org") -> Member:
        key = format_key(generate_key_id(), generate_secret())
        principal = Principal(organization_id, name, user_id or uuid4(), role, key.split("_")[1])
        with self._lock:
            self._keys[key] = principal
        return Member(key, principal)

    def revoke(self, key: str) -> None:
        """The key stops being active (as the api's database would say after a revocation)."""
        with self._lock:
            self._keys.pop(key, None)

    def organization(self) -> FakeOrg:
        org_id = uuid4()
        return FakeOrg(
            org_id,
            admin=self.member(org_id, Role.ADMIN),
            user=self.member(org_id, Role.USER),
            other_user=self.member(org_id, Role.USER),
            viewer=self.member(org_id, Role.VIEW_ONLY),
        )

    def provisioned(self, name: str) -> provisioning.Org:
        """An organization shaped as the admin command line makes them (``dps_testing.provisioning``:
        an admin, a user and a view-only member, each with a key; ``member`` adds one), its keys
        known to this fake only."""
        org_id = uuid4()
        slug = name.lower().replace(" ", "-")

        def add(role: str, email: str) -> provisioning.Member:
            member = self.member(org_id, Role(role), name=name)
            return provisioning.Member(str(member.user_id), email, role, member.key, member.principal.key_id)

        labels = provisioning.ROLE_LABELS
        members = {label: add(role, f"{label}@{slug}.example") for role, label in labels.items()}
        return provisioning.Org(str(org_id), name, members["admin"], members["user"], members["viewer"], add_member=add)

    def put_quote(self, snapshot: Snapshot) -> None:
        with self._lock:
            self._snapshots[(snapshot.organization_id, snapshot.id)] = snapshot

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = Request(environ)
        if request.headers.get("Authorization") != f"Bearer {self._token}":
            return Response(status=401)(environ, start_response)
        endpoint, args = self._urls.bind_to_environ(environ).match()
        if endpoint == "introspect":
            key = (request.get_json(silent=True) or {}).get("key", "")
            with self._lock:
                principal = self._keys.get(key)
            body = principal_to_json(principal) if principal else {"active": False}
            return Response(json.dumps(body), content_type="application/json")(environ, start_response)
        with self._lock:
            self.snapshot_reads += 1
            try:
                snapshot = self._snapshots.get((UUID(args["org"]), UUID(args["quote"])))
            except ValueError:
                snapshot = None
        if snapshot is None:
            return Response(json.dumps({"code": "not_found"}), status=404,
                            content_type="application/problem+json")(environ, start_response)
        return Response(json.dumps(snapshot.to_json()), content_type="application/json")(environ, start_response)
