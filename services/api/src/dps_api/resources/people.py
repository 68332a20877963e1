"""``/people``: the settings console's team page, for admins (the organization's people, and their
API-key access)."""

from typing import Any

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging
from dps_common.http.paging import serve_page
from dps_common.http.params import path_id
from dps_common.paging import CursorCodec, PageRequest

from dps_api.resources.context import AppContext
from dps_api.schemas.api_keys import ApiKeyAccessUpdate, Person, PersonList, render_person
from dps_api.services.people import PeopleService

TAG = "Team"
PAGING = Paging(default=100, maximum=500, items_property="people")
_ADMIN = (
    "Only a credential of the settings console holds `api-keys:manage` (an integration key never does), "
    "and only an admin's may use this operation (else 403 `forbidden`). "
)


class PeopleResource:
    operations = {
        "GET": Operation(
            summary="List the organization's people with their role and API-key access.",
            scope=Scope.API_KEYS_MANAGE,
            response=PersonList,
            paging=PAGING,
            tag=TAG,
            description=_ADMIN + "By id (creation order).",
            operation_id="listPeople",
        ),
    }

    def __init__(self, service: PeopleService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        principal = req.context.principal

        def fetch(page: PageRequest) -> list[dict[str, Any]]:
            return [render_person(p) for p in self._service.list_people(principal, page)]

        resp.media = serve_page(req, PAGING, self._cursors, fetch)


class PersonApiKeyAccessResource:
    operations = {
        "PUT": Operation(
            summary="Grant or withdraw a person's API-key access.",
            scope=Scope.API_KEYS_MANAGE,
            response=Person,
            body=ApiKeyAccessUpdate,
            tag=TAG,
            errors=(409,),
            description=_ADMIN + "A person with access manages their own integration keys in the console. "
            "Only people with the user role may be granted it (admins manage keys regardless; view only has no "
            "API-key rights): granting it to a view-only person is 409 `view_only_no_key_access`. "
            "Withdrawing it does not revoke the keys they hold (revoke those on the API keys page); it ends "
            "their API-key management at once. Any change signs the person out of the console (their console "
            "credentials are revoked), so it applies to their next sign-in. Admins manage keys regardless.",
            operation_id="setApiKeyAccess",
        ),
    }

    def __init__(self, service: PeopleService):
        self._service = service

    def on_put(self, req: falcon.Request, resp: falcon.Response, person_id: str) -> None:
        granted = parse_body(req, ApiKeyAccessUpdate).granted
        person = self._service.set_api_key_access(req.context.principal, path_id(person_id, "Person"), granted)
        resp.media = render_person(person)


def register(api: Api, ctx: AppContext) -> None:
    service = PeopleService(ctx.tx, ctx.now, ctx.authenticator.forget)
    api.add("/people", PeopleResource(service, ctx.cursors))
    api.add("/people/{person_id}/api-key-access", PersonApiKeyAccessResource(service))
