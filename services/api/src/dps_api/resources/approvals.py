"""Approval requests: ``/pricing-quotes/{id}/approval`` (submit, recall) and ``/approvals`` (list, read,
approve, reject)."""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

import falcon

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.http.app import API_PREFIX, Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.http.paging import cursor_scope, page_request, page_response
from dps_common.http.params import (
    invalid_param,
    path_id,
    query_enum,
    query_int,
    query_uuid,
)
from dps_common.paging import CursorCodec, PageRequest

from dps_api.domain.approval_flow import RequestStatus
from dps_api.domain.approval_requests import ApprovalRequestView
from dps_api.resources.context import AppContext
from dps_api.schemas.approvals import ApprovalRequest, ApprovalRequestList, DecisionBody, render_approval
from dps_api.services.approvals import ApprovalFilters, ApprovalService

TAG = "Approvals"
PAGING = Paging(default=20, maximum=100, items_property="approvals")
WHAT = "Approval request"
MAX_OFFSET = 1_000_000_000
# RFC 9745: offset/count on GET /approvals have been deprecated since 2026-01-01T00:00:00Z
DEPRECATION = "@1767225600"
DEPRECATION_LINK = f'<{API_PREFIX}/openapi.json>; rel="deprecation"; type="application/json"'
QUERY = (
    QueryParam(
        "status", {"type": "string", "enum": [s.value for s in RequestStatus]}, "Only requests in this status."
    ),
    QueryParam("quoteId", {"type": "string", "format": "uuid"}, "Only the requests of this pricing quote."),
    QueryParam(
        "offset",
        {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET},
        "Deprecated: use limit and cursor. Items to skip, newest first; cannot be combined with cursor.",
        deprecated=True,
    ),
    QueryParam(
        "count",
        {"type": "integer", "minimum": 1, "maximum": PAGING.maximum},
        "Deprecated: use limit. Page size, 1..100; cannot be combined with limit.",
        deprecated=True,
    ),
)
_DECIDE_DOC = (
    "Only a member of an approval group the current step still waits on may decide (403 `not_an_approver`); "
    "never the quote's owner (403 `self_approval`). 409 `approval_not_pending` once the request is decided."
)


def _legacy_paging(req: falcon.Request, page: PageRequest) -> tuple[PageRequest, int | None]:
    """The deprecated ``offset`` / ``count`` parameters: the page they ask for and the offset, if any."""
    offset = query_int(req, "offset", minimum=0, maximum=MAX_OFFSET)
    count = query_int(req, "count", minimum=1, maximum=PAGING.maximum)
    if offset is not None and req.get_param("cursor"):
        raise invalid_param("offset", "cannot be combined with cursor; continue with cursor alone")
    if count is not None and req.get_param("limit") is not None:
        raise invalid_param("count", "cannot be combined with limit; use limit")
    return (PageRequest(count, page.after) if count is not None else page), offset


class ApprovalsResource:
    operations = {
        "GET": Operation(
            summary="List the organization's approval requests, newest first.",
            scope=Scope.APPROVALS_READ,
            response=ApprovalRequestList,
            paging=PAGING,
            query=QUERY,
            tag=TAG,
            description=(
                "The cursor resumes by position: a request created ahead of it during a walk is not shown. "
                "The deprecated `offset` and `count` parameters still work (same newest-first order; nextCursor "
                "continues after the page by cursor); responses to them carry a `Deprecation` header (RFC 9745) "
                "and a `Link` with rel=\"deprecation\"."
            ),
            operation_id="listApprovals",
        ),
    }

    def __init__(self, service: ApprovalService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters = ApprovalFilters(status=query_enum(req, "status", RequestStatus), quote_id=query_uuid(req, "quoteId"))
        scope = cursor_scope(req, {"status": filters.status, "quoteId": filters.quote_id})
        page = page_request(req, PAGING, self._cursors, scope)
        page, offset = _legacy_paging(req, page)
        items = [render_approval(r) for r in self._service.list(req.context.principal, filters, page, offset or 0)]
        resp.media = page_response(items, page, PAGING, self._cursors, scope)
        if offset is not None or req.get_param("count") is not None:
            resp.set_header("Deprecation", DEPRECATION)
            resp.append_header("Link", DEPRECATION_LINK)


class ApprovalResource:
    operations = {
        "GET": Operation(
            summary="Get an approval request.",
            scope=Scope.APPROVALS_READ,
            response=ApprovalRequest,
            tag=TAG,
            operation_id="getApproval",
        ),
    }

    def __init__(self, service: ApprovalService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, approval_id: str) -> None:
        resp.media = render_approval(self._service.get(req.context.principal, path_id(approval_id, WHAT)))


def _decision_body(req: falcon.Request) -> DecisionBody:
    if req.content_type is None and not req.content_length:
        return DecisionBody()  # no body at all: no comment
    return parse_body(req, DecisionBody)


def _decision(summary: str, description: str, operation_id: str) -> Operation:
    return Operation(
        summary=summary,
        scope=Scope.APPROVALS_DECIDE,
        response=ApprovalRequest,
        body=DecisionBody,
        body_required=False,
        errors=(409,),
        tag=TAG,
        description=description,
        operation_id=operation_id,
    )


APPROVE = _decision(
    "Approve the step an approval request waits on.",
    _DECIDE_DOC + " 409 `already_approved` when the key's user already approved this step "
    "(a repeat is refused, not ignored). When the last step completes, the request and its quote become "
    "APPROVED.",
    "approveApproval",
)
REJECT = _decision(
    "Reject an approval request; the request and its quote become REJECTED.", _DECIDE_DOC, "rejectApproval"
)


class DecisionResource:
    """``POST /approvals/{id}/approve`` or ``/reject``: one decision on the step the request waits on."""

    def __init__(
        self, operation: Operation, decide: Callable[[Principal, UUID, str | None], ApprovalRequestView]
    ):
        self.operations = {"POST": operation}
        self._decide = decide

    def on_post(self, req: falcon.Request, resp: falcon.Response, approval_id: str) -> None:
        target = path_id(approval_id, WHAT)
        resp.media = render_approval(self._decide(req.context.principal, target, _decision_body(req).comment))


class QuoteApprovalResource:
    operations = {
        "POST": Operation(
            summary="Submit a pricing quote for approval.",
            scope=Scope.APPROVALS_SUBMIT,
            response=ApprovalRequest,
            status=201,
            errors=(409,),
            tag=TAG,
            description=(
                "The quote's owner, or an admin key, submits a DRAFT quote with at least one line (409 "
                "`quote_not_draft` / `quote_has_no_lines`). The active approval rules are evaluated and the "
                "approval chain is snapshotted: when no rule fires, the request and the quote are APPROVED at once; "
                "otherwise the quote becomes PENDING_APPROVAL. 409 `approval_unsatisfiable` when an approval group "
                "has fewer members other than the quote's owner than the approvals it requires."
            ),
            operation_id="submitQuoteApproval",
        ),
        "DELETE": Operation(
            summary="Recall a pricing quote's pending approval request; the quote goes back to DRAFT.",
            scope=Scope.APPROVALS_SUBMIT,
            response=ApprovalRequest,
            errors=(409,),
            tag=TAG,
            description="The quote's owner, or an admin key. Returns the recalled request. 409 "
            "`no_pending_approval` when the quote has no pending request.",
            operation_id="recallQuoteApproval",
        ),
    }

    def __init__(self, service: ApprovalService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response, quote_id: str) -> None:
        resp.media = render_approval(self._service.submit(req.context.principal, path_id(quote_id, "Pricing quote")))
        resp.status = falcon.HTTP_201

    def on_delete(self, req: falcon.Request, resp: falcon.Response, quote_id: str) -> None:
        resp.media = render_approval(self._service.recall(req.context.principal, path_id(quote_id, "Pricing quote")))


def register(api: Api, ctx: AppContext) -> None:
    service = ApprovalService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/pricing-quotes/{quote_id}/approval", QuoteApprovalResource(service))
    api.add("/approvals", ApprovalsResource(service, ctx.cursors))
    api.add("/approvals/{approval_id}", ApprovalResource(service))
    api.add("/approvals/{approval_id}/approve", DecisionResource(APPROVE, service.approve))
    api.add("/approvals/{approval_id}/reject", DecisionResource(REJECT, service.reject))
