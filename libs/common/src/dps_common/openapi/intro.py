"""The introduction of the API reference: ``info.description`` of the document (Markdown, which the
reference page at ``/external/v1/docs`` shows above the operations). What every operation shares and
no single operation says: authentication, errors and every ``code``, paging, idempotency, rate
limits, webhooks and how to verify them, versioning. Every ``code`` the services answer is in the
table (libs/common/tests/unit/test_openapi_for_clients.py checks it against the sources)."""

from __future__ import annotations

# (status, code, when): every `code` of a problem+json answer, in the order a client meets them.
ERROR_CODES: tuple[tuple[int, str, str], ...] = (
    (400, "malformed_json", "The body is not JSON."),
    (400, "validation_error", "A field is missing, malformed or of the wrong type; `errors` names each field."),
    (400, "bad_request", "The request cannot be read (e.g. a query parameter of the wrong type)."),
    (400, "invalid_limit", "`limit` is not an integer within the operation's range."),
    (400, "invalid_cursor", "`cursor` was not issued for this list and these filters."),
    (400, "invalid_idempotency_key", "`Idempotency-Key` is empty, too long or not printable ASCII."),
    (400, "unknown_reference", "An id in the body names nothing of the organization."),
    (400, "no_price_in_currency", "The product has no price in the quote's currency."),
    (400, "product_inactive", "The product is inactive."),
    (400, "pricebook_currency_mismatch", "The pricebook's currency is not the quote's."),
    (400, "invalid_signature", "The billing platform's webhook signature is missing, wrong or stale."),
    (400, "invalid_event", "The billing platform's webhook body is not an event."),
    (401, "missing_api_key", "No `x-api-key` header."),
    (401, "invalid_api_key", "The key is unknown, revoked, expired or malformed. Do not retry with it."),
    (401, "unauthorized", "Not authenticated."),
    (401, "invalid_service_token", "An internal route without the service token (never on `/external/v1`)."),
    (403, "missing_scope", "The key's role lacks a scope; `requiredScope` names it."),
    (403, "forbidden", "The key's user may not do this (e.g. a key for another user, by a non-admin)."),
    (403, "role_too_high", "A key above the caller's own role."),
    (403, "not_quote_owner", "Only the quote's owner (or an admin) may change it."),
    (403, "locked_price", "Below list on a locked product needs `locked-prices:write`."),
    (403, "pricebook_not_assigned", "The pricebook is not assigned to the quote's owner."),
    (403, "not_an_approver", "The key's user is in none of the step's approval groups."),
    (403, "self_approval", "The quote's owner cannot approve their own quote."),
    (403, "closed_won_reopen_needs_admin", "Reopening a closed-won opportunity needs an admin key."),
    (404, "not_found", "No such object in the key's organization."),
    (408, "request_timeout", "The request's head or body was not received in time."),
    (409, "conflict", "The object's current state does not allow the operation."),
    (409, "spec_id_taken", "Another product has this `specId`."),
    (409, "crm_id_taken", "Another opportunity has this `crmId`."),
    (409, "pricebook_inactive", "The pricebook is inactive."),
    (409, "quote_pending_approval", "The quote is waiting for approval: recall it first."),
    (409, "quote_not_draft", "The quote is not a draft."),
    (409, "quote_has_no_lines", "A quote without lines cannot be submitted."),
    (409, "quote_line_limit", "The quote has the most lines a quote may have."),
    (409, "quote_not_approved", "Only an approved quote can be pushed to billing."),
    (409, "approval_unsatisfiable", "A step names an approval group nobody can vote in."),
    (409, "approval_not_pending", "The approval request was already decided or recalled."),
    (409, "no_pending_approval", "The quote has no pending approval request."),
    (409, "already_approved", "The key's user already voted on this step."),
    (409, "already_closed_won", "The opportunity is already closed-won."),
    (409, "use_closed_won_action", "Close an opportunity won with `POST .../closed-won`, not an update."),
    (409, "rule_group_in_use", "Rules still belong to this rule group."),
    (409, "deal_group_limit_reached", "The organization has the most deal groups it may have."),
    (409, "api_key_revoked", "A revoked key cannot be rotated."),
    (409, "view_only_no_key_access", "The settings console: a view-only person cannot be given API-key access."),
    (409, "webhook_config_revoked", "The endpoint was deleted; it stays disabled for good."),
    (409, "webhook_config_disabled", "The endpoint is disabled: no test or retry until it is active again."),
    (409, "invalid_status_transition", "The endpoint cannot move from its status to the one asked for."),
    (409, "event_payload_not_kept", "The event's payload was over 1 MB: never delivered, its body not kept."),
    (409, "billing_not_connected", "No billing platform is connected."),
    (409, "billing_connection_broken", "The billing connection is broken: connect again."),
    (409, "idempotency_key_in_use", "A request with this `Idempotency-Key` is still running; retry later."),
    (413, "payload_too_large", "The body is larger than 10 MB."),
    (414, "uri_too_long", "The request line is longer than 4094 bytes."),
    (415, "unsupported_media_type", "A body without `Content-Type: application/json`."),
    (417, "expectation_failed", "An `Expect` header other than `100-continue`; answered by the server."),
    (422, "idempotency_key_reused", "The `Idempotency-Key` was used with another method, path or body."),
    (422, "unprocessable_content", "The request is well formed but cannot be processed."),
    (429, "rate_limited", "The request budget is spent; retry after `Retry-After` seconds."),
    (431, "request_header_fields_too_large", "A header over 8190 bytes, or more than 100 headers."),
    (500, "internal_error", "A fault on the server's side; `requestId` identifies it in the logs."),
    (501, "unsupported_transfer_coding", "A `Transfer-Encoding` other than `chunked`; answered by the server."),
    (502, "upstream_error", "A service this one depends on answered wrongly."),
    (502, "billing_platform_unavailable", "The billing platform could not be reached."),
    (502, "quote_snapshot_invalid", "The stored quote cannot be read for a billing push."),
    (503, "service_unavailable", "The service cannot answer right now; retry shortly."),
    (503, "key_check_unavailable", "API keys cannot be checked right now; nothing was done."),
    (503, "quote_unavailable", "The quote cannot be fetched from the api right now; retry shortly."),
)

_VERIFY_SAMPLE = '''```python
# pip install standardwebhooks
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

webhook = Webhook("whsec_...")  # the endpoint's signing secret, shown once when it was created

def receive(body: bytes, headers: dict[str, str]) -> int:
    try:
        event = webhook.verify(body, headers)  # checks webhook-id, webhook-timestamp, webhook-signature
    except WebhookVerificationError:
        return 400  # not from us, altered, or older than 5 minutes: ignore it
    if already_seen(event["id"]):  # retries and replays repeat the event id
        return 200
    handle(event["type"], event["data"])
    return 200  # any 2xx within 10 s; anything else is retried
```'''


def _error_table() -> str:
    rows = "\n".join(f"| {status} | `{code}` | {when} |" for status, code, when in ERROR_CODES)
    return "| Status | `code` | When |\n|---|---|---|\n" + rows


def introduction() -> str:
    return f"""\
The Deal Pricing Service API: products and pricebooks, opportunities, pricing quotes and their approval,
webhooks for every change, and pushing an approved quote to a billing platform. JSON over HTTPS; every
path is relative to the server address, which ends in the version, `/external/v1`.

## Authentication

Every request carries the organization's API key in the `x-api-key` header (no OAuth, no bearer token).
A key belongs to one organization and one user: everything it reads or writes is that organization's,
and an organization id in a request is ignored. A key's role (admin, user, view-only) grants scopes;
each operation names the scope it needs (`x-required-scopes`), and a key without it gets 403
`missing_scope` with `requiredScope`. Keys are issued in the settings console; a key's secret is shown
once. The console's own operations (`/api-keys`, `/people`) take a console sign-in, never an API key,
so they are not in this document: every operation here can be called with a key of the right role.

## Errors

Every error is an RFC 9457 problem (`application/problem+json`) with `type`, `title`, `status`,
`detail`, a stable machine-readable `code` and the `requestId` (the `X-Request-Id` of the answer;
quote it when asking for help). A 400 `validation_error` lists the fields in `errors`. Branch on
`code`, never on `detail`. Unknown fields in a request body are ignored.

Numbers: an `integer` field takes any JSON number whose fraction is zero, however it is written
(`12`, `12.0`, `1.2e1`, as JSON Schema counts integers); `12.5`, `"12"` or `true` is a 400
`validation_error` naming the field. Amounts, prices, quantities and percentages are decimal strings
(`"1234.50"`, ASCII digits), never JSON numbers, so that no client rounds them.

{_error_table()}

## Paging

Lists are cursor-paged. `limit` sets the page size (each list documents its range and default);
the answer holds the page's items and `nextCursor`, always present: pass it as `cursor` for the next
page, or stop when it is `null`. A cursor belongs to its list and filters: keep the same filters
while paging. Items are in creation order (ids are time-ordered UUIDs) unless a list says otherwise.

## Idempotency

Every POST that needs a key accepts an `Idempotency-Key` header (1 to 255 printable ASCII characters,
e.g. a UUID): a retry with the same key, method, path and body within 24 hours gets the first answer
again, marked `Idempotent-Replayed: true`, and nothing is done twice. The same key with another
method, path or body is 422 `idempotency_key_reused`; while the first request runs, a retry is 409
`idempotency_key_in_use`. Answers refused before the operation ran (401, 403, 429, 400 for the key or
the body, 413, 415), conflicts and server errors are not kept: a retry runs again. A secret is never
kept: a replay carries it as null, with `secretShownOnce` saying how to get a new one.

## Rate limits

One budget per organization across the whole API (100 requests per second); requests without a valid
key have a budget per client address, and so do this reference and the OpenAPI document. Every answer
says where it stands (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` names the policy and its
quota (`q` requests per `w` seconds), `RateLimit` what is left (`r` requests within `t` seconds). A 429
`rate_limited` did nothing; wait the `Retry-After` seconds, then retry.

## Webhooks

Each webhook endpoint receives the event types it subscribed to (the `webhooks` section of this
document: every type, its `data`), as a POST of the event envelope `{{id, type, version, occurredAt,
organizationId, data}}`. Deliveries are signed per [Standard Webhooks](https://www.standardwebhooks.com):
verify each with a Standard Webhooks library and the endpoint's `whsec_` secret before trusting it,
deduplicate by the event id (`X-Service-Event-Id`, the same on every retry), order by `occurredAt`.
A delivery not answered 2xx within 10 seconds is retried.

Missed some? `GET /events` lists every event of the organization of the last 30 days, newest first,
whether or not an endpoint was sent it, and `GET /events/{{eventId}}` gives one exactly as delivered
(the same bytes). To catch up after downtime, list from a little before the last event you processed,
skip the ids you handled, and fetch the rest, or have them delivered again (`.../retry`, `.../recover`):
the operations' descriptions say how.

{_VERIFY_SAMPLE}

## Versioning and deprecation

The version is the path segment `/external/v1`. Within a version the API only grows: new operations
and new response fields (and new event types and `code` values) appear
without notice, so clients ignore fields they do not know. A change that would break a working
integration comes under a new version path. A deprecated parameter or operation keeps working; it is
marked `deprecated` here, and answers that use it carry a `Deprecation` header (RFC 9745, the date it
was deprecated) and a `Link` with `rel="deprecation"` to the notice. Today: `offset` and `count` on
`GET /approvals` (use `cursor` and `limit`).
"""
