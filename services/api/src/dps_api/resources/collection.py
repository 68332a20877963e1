"""The shape the catalog and the approval configuration share (products, pricebooks, approval groups,
rules and rule groups): a collection that lists a cursor page and creates (201), and its items, read,
partly updated (PATCH) and, for some, deleted (204). Every answer is one view, rendered.

A concrete resource declares only what differs: its ``operations`` (what the auth middleware enforces
and the OpenAPI document shows), its ``paging`` and boolean list ``filters``, what its path id names
(``what``, in the 404), and one line per use case: the body parsed into a command, the call, the
rendering. The responders here stay thin (house rule 2): parse, call one use case, shape the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar
from uuid import UUID

import falcon

from dps_common.auth.principal import Principal
from dps_common.http.operations import Operation, Paging
from dps_common.http.paging import serve_page
from dps_common.http.params import path_id, query_bool
from dps_common.paging import CursorCodec, PageRequest

S = TypeVar("S")  # the use cases' service
V = TypeVar("V")  # the view a use case returns


class Rendered(Generic[S, V]):
    operations: ClassVar[dict[str, Operation]]

    def __init__(self, service: S):
        self._service = service

    def render(self, view: V) -> dict[str, Any]:
        raise NotImplementedError


class CollectionResource(Rendered[S, V]):
    """``GET`` a page of the collection, ``POST`` a new member."""

    paging: ClassVar[Paging]
    filters: ClassVar[tuple[str, ...]] = ()  # boolean query parameters the list is filtered by

    def __init__(self, service: S, cursors: CursorCodec):
        super().__init__(service)
        self._cursors = cursors

    def list_page(self, principal: Principal, page: PageRequest, **filters: bool | None) -> Sequence[V]:
        raise NotImplementedError

    def create(self, principal: Principal, req: falcon.Request) -> V:
        raise NotImplementedError

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        principal = req.context.principal
        filters = {name: query_bool(req, name) for name in self.filters}

        def fetch(page: PageRequest) -> list[dict[str, Any]]:
            return [self.render(view) for view in self.list_page(principal, page, **filters)]

        resp.media = serve_page(req, self.paging, self._cursors, fetch, filters or None)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.render(self.create(req.context.principal, req))
        resp.status = falcon.HTTP_201


class ItemResource(Rendered[S, V]):
    """``GET`` and ``PATCH`` one member, named by the route's one path field."""

    what: ClassVar[str]  # "Approval rule": a malformed or unknown id is a 404 naming it

    def get(self, principal: Principal, target: UUID) -> V:
        raise NotImplementedError

    def update(self, principal: Principal, target: UUID, req: falcon.Request) -> V:
        raise NotImplementedError

    def target(self, path: dict[str, str]) -> UUID:
        [raw] = path.values()
        return path_id(raw, self.what)

    def on_get(self, req: falcon.Request, resp: falcon.Response, **path: str) -> None:
        resp.media = self.render(self.get(req.context.principal, self.target(path)))

    def on_patch(self, req: falcon.Request, resp: falcon.Response, **path: str) -> None:
        target = self.target(path)  # a malformed id is a 404 before the body is read
        resp.media = self.render(self.update(req.context.principal, target, req))


class DeletableItemResource(ItemResource[S, V]):
    """An item that can also be deleted (``DELETE``, 204)."""

    def delete(self, principal: Principal, target: UUID) -> None:
        raise NotImplementedError

    def on_delete(self, req: falcon.Request, resp: falcon.Response, **path: str) -> None:
        self.delete(req.context.principal, self.target(path))
        resp.status = falcon.HTTP_204
