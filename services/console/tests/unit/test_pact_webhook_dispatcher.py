"""The webhook dispatcher's operations as the console calls them (``backends.webhooks`` in
``resources/webhooks.py``, ``resources/recovery.py`` and ``resources/deliveries.py``, the event
catalogue of ``services/catalogue.py``): the endpoints, one endpoint (with its requests-per-second
limit), add (with a limit, and one out of range refused), edit, pause, send a test, rotate the secret,
delete; the recovery of its failed deliveries (and its refusal for a disabled endpoint); its traffic
over 24 hours and 7 days; an endpoint's deliveries (and those of one status: the dispatcher's
filter), one delivery (with its request as sent, and each attempt's headers), a retry; the event
types. Written as a
consumer-driven contract (Pact) for the dispatcher: ``pacts/console-webhook-dispatcher.json``
(committed; the dispatcher's suite verifies it against a real dispatcher server:
services/webhook-dispatcher/tests/integration/test_pact_provider.py).

The console calls as the signed-in person (their console credential as ``x-api-key``; the provider
verifies with a key of its own). The endpoint and delivery ids are the provider's: each provider state
makes them and returns them, and the verifier puts them in the paths. Only what the console's pages
read is in the responses. What is recorded is compared with the committed file:
``PACT_WRITE=1 pytest <this file>`` rewrites it.
"""

from __future__ import annotations

from typing import Any

import pytest
from pact import Pact, match

from dps_testing.pacts import OCCURRED_AT, ConsumerContract, from_state

from dps_console.adapters.backends import Backend, Backends
from dps_console.domain.problems import ServiceRefused
from dps_console.services.catalogue import EventCatalogue

CONTRACT = ConsumerContract("console", "webhook-dispatcher")
pact_recorded, pact = CONTRACT.fixtures()
BASE = "/external/v1"
CREDENTIAL = "dps_k3y1d_s3cr3t"
API_KEY = match.regex(CREDENTIAL, regex=r"^dps_[A-Za-z0-9-]+_\S+$")
ENDPOINT = "00000000-0000-4000-8000-000000000011"
DELIVERY = "00000000-0000-4000-8000-000000000012"
UUID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
URL = "https://127.0.0.1:8443/hooks"
FORM = {"url": URL, "description": "Deal desk", "eventTypes": ["quote.approved"]}  # the console's form body
STATUS = match.regex("ACTIVE", regex=r"^(ACTIVE|PAUSED|DISABLED)$")
DELIVERY_STATUS = match.regex("PENDING", regex=r"^(PENDING|SUCCESS|FAILED|EXHAUSTED)$")
AT = match.regex("2027-01-01T10:00:00Z", regex=OCCURRED_AT)
TOKEN_RE = r"^[A-Za-z0-9_-]{43}$"  # the submitted form's one-time token (dps_console.domain.tokens)


def once(example: str) -> tuple[str, Any]:
    """The ``Idempotency-Key`` a keyed POST carries (the form's one-time token) and its matcher; each
    interaction its own example, so the provider's runs of them never share a key. Only the POSTs with
    a body say it here: the verifier sends a bodiless POST without Content-Length, which the test's
    wsgiref server then reads to the connection's end once the key makes the service read the body
    (the console's requests always send ``Content-Length: 0``; the keyed bodiless POSTs of the
    console, test, rotate-secret and retry, are covered by its HTTP and browser tests)."""
    value = (example * 43)[:43]
    return value, match.regex(value, regex=TOKEN_RE)


def webhooks(url: str) -> Backend:
    return Backends.from_urls(url, url, url + BASE, url, timeout=5).webhooks


def endpoint_path(tail: str = "") -> Any:
    return from_state(f"{BASE}/webhook-configs/{ENDPOINT}{tail}", rf"^{BASE}/webhook-configs/{UUID_RE}{tail}$",
                      f"{BASE}/webhook-configs/${{endpointId}}{tail}")


def delivery_path(tail: str = "") -> Any:
    deliveries = "/webhook-configs/{}/deliveries/{}"
    return from_state(BASE + deliveries.format(ENDPOINT, DELIVERY) + tail,
                      "^" + BASE + deliveries.format(UUID_RE, UUID_RE) + tail + "$",
                      BASE + deliveries.format("${endpointId}", "${deliveryId}") + tail)


def called(pact: Pact, description: str, state: str, method: str, path: Any, status: int) -> Any:
    return (
        pact.upon_receiving(description)
        .given(state)
        .with_request(method, path)
        .with_header("x-api-key", API_KEY)
        .will_respond_with(status)
    )


def endpoint_body() -> dict[str, Any]:
    """What the endpoint's page reads."""
    return {
        "id": match.uuid(ENDPOINT),
        "url": match.str(URL),
        "description": match.str("Deal desk"),
        "status": STATUS,
        "eventTypes": match.each_like("quote.approved"),
        "consecutiveFailures": match.int(0),
        "createdAt": AT,
    }


def test_the_endpoints_page_lists_the_endpoints(pact: Pact):
    listed = {k: v for k, v in endpoint_body().items() if k not in ("eventTypes", "createdAt")}
    (
        called(pact, "the webhook endpoints", "a webhook endpoint", "GET", BASE + "/webhook-configs", 200)
        .with_body({"webhookConfigs": match.each_like(listed)}, content_type="application/json")
        .with_query_parameter("limit", "100")
    )
    with pact.serve() as server:
        answer = webhooks(str(server.url)).call("GET", "/webhook-configs", CREDENTIAL, params={"limit": "100"})
    assert answer["webhookConfigs"][0]["status"] == "ACTIVE"


def test_the_endpoint_page_shows_one_endpoint(pact: Pact):
    called(pact, "a webhook endpoint", "a webhook endpoint", "GET", endpoint_path(), 200).with_body(
        endpoint_body(), content_type="application/json"
    )
    with pact.serve() as server:
        endpoint = webhooks(str(server.url)).call("GET", f"/webhook-configs/{ENDPOINT}", CREDENTIAL)
    assert (endpoint["url"], endpoint["eventTypes"]) == (URL, ["quote.approved"])


def test_adding_an_endpoint_shows_its_secret_once(pact: Pact):
    key, matcher = once("a")
    (
        called(pact, "a new webhook endpoint", "an organization", "POST", BASE + "/webhook-configs", 201)
        .with_header("Idempotency-Key", matcher, part="Request")
        .with_body({"id": match.uuid(ENDPOINT), "url": match.str(URL), "secret": match.str("whsec_c2VjcmV0")},
                   content_type="application/json")
        .with_body(FORM, content_type="application/json", part="Request")
    )
    with pact.serve() as server:
        created = webhooks(str(server.url)).call("POST", "/webhook-configs", CREDENTIAL, json=FORM, once=key)
    assert (created["id"], created["secret"]) == (ENDPOINT, "whsec_c2VjcmV0")


def test_a_refused_url_is_shown_beside_the_field(pact: Pact):
    form = {**FORM, "url": "http://127.0.0.1:8443/hooks"}
    key, matcher = once("b")
    (
        called(pact, "a new webhook endpoint with a refused URL", "an organization", "POST",
               BASE + "/webhook-configs", 400)
        .with_header("Idempotency-Key", matcher, part="Request")
        .with_body(form, content_type="application/json", part="Request")
        .with_body({
            "code": match.str("validation_error"),
            "errors": match.each_like({"field": match.str("url"), "message": match.str("must use https")}),
        }, content_type="application/problem+json")
    )
    with pact.serve() as server, pytest.raises(ServiceRefused) as refused:
        webhooks(str(server.url)).call("POST", "/webhook-configs", CREDENTIAL, json=form, once=key)
    assert refused.value.problem.fields == {"url": ["must use https"]}


def test_editing_an_endpoint_saves_the_form(pact: Pact):
    called(pact, "an edit of a webhook endpoint", "a webhook endpoint", "PUT", endpoint_path(), 200).with_body(
        FORM, content_type="application/json", part="Request"
    )
    with pact.serve() as server:
        webhooks(str(server.url)).call("PUT", f"/webhook-configs/{ENDPOINT}", CREDENTIAL, json=FORM)


def test_pausing_an_endpoint(pact: Pact):
    called(pact, "a webhook endpoint paused", "a webhook endpoint", "PUT", endpoint_path(), 200).with_body(
        {"status": "PAUSED"}, content_type="application/json", part="Request"
    )
    with pact.serve() as server:
        webhooks(str(server.url)).call("PUT", f"/webhook-configs/{ENDPOINT}", CREDENTIAL, json={"status": "PAUSED"})


def test_sending_a_test_event(pact: Pact):
    called(pact, "a test event to a webhook endpoint", "a webhook endpoint", "POST", endpoint_path("/test"), 202)
    with pact.serve() as server:
        webhooks(str(server.url)).call("POST", f"/webhook-configs/{ENDPOINT}/test", CREDENTIAL)


def test_rotating_the_secret_shows_the_new_one_once(pact: Pact):
    (
        called(pact, "a new signing secret", "a webhook endpoint", "POST", endpoint_path("/rotate-secret"), 200)
        .with_body({"url": match.str(URL), "secret": match.str("whsec_bmV3")}, content_type="application/json")
    )
    with pact.serve() as server:
        rotated = webhooks(str(server.url)).call("POST", f"/webhook-configs/{ENDPOINT}/rotate-secret", CREDENTIAL)
    assert rotated["secret"] == "whsec_bmV3"


def test_deleting_an_endpoint(pact: Pact):
    called(pact, "the deletion of a webhook endpoint", "a webhook endpoint", "DELETE", endpoint_path(), 204)
    with pact.serve() as server:
        assert webhooks(str(server.url)).call("DELETE", f"/webhook-configs/{ENDPOINT}", CREDENTIAL) is None


def delivery_body() -> dict[str, Any]:
    """What the delivery log reads of a delivery."""
    return {
        "id": match.uuid(DELIVERY),
        "eventType": match.str("webhook.test"),
        "isTest": match.bool(True),
        "status": DELIVERY_STATUS,
        "attemptCount": match.int(0),
        "createdAt": AT,
    }


def test_the_delivery_log_lists_an_endpoints_deliveries(pact: Pact):
    (
        called(pact, "a webhook endpoint's deliveries", "a webhook delivery", "GET", endpoint_path("/deliveries"), 200)
        .with_query_parameter("limit", "50")
        .with_body({"deliveries": match.each_like(delivery_body())}, content_type="application/json")
    )
    with pact.serve() as server:
        answer = webhooks(str(server.url)).call("GET", f"/webhook-configs/{ENDPOINT}/deliveries", CREDENTIAL,
                                                params={"limit": "50"})
    assert answer["deliveries"][0]["id"] == DELIVERY


def test_the_delivery_log_filtered_by_status_is_the_dispatchers_filter(pact: Pact):
    """The log's status filter goes to the dispatcher (each page full of matches, its cursor bound to
    the filter), never applied to a fetched page."""
    exhausted = {**delivery_body(), "eventType": match.str("quote.approved"), "isTest": match.bool(False),
                 "status": "EXHAUSTED", "attemptCount": match.int(8)}
    (
        called(pact, "a webhook endpoint's exhausted deliveries", "a webhook endpoint with an exhausted delivery",
               "GET", endpoint_path("/deliveries"), 200)
        .with_query_parameter("limit", "50")
        .with_query_parameter("status", "EXHAUSTED")
        .with_body({"deliveries": match.each_like(exhausted)}, content_type="application/json")
    )
    with pact.serve() as server:
        answer = webhooks(str(server.url)).call("GET", f"/webhook-configs/{ENDPOINT}/deliveries", CREDENTIAL,
                                                params={"limit": "50", "status": "EXHAUSTED"})
    assert {delivery["status"] for delivery in answer["deliveries"]} == {"EXHAUSTED"}


def test_one_delivery_with_its_attempts(pact: Pact):
    body = {**delivery_body(), "eventId": match.uuid(DELIVERY), "attempts": match.type([])}
    called(pact, "a webhook delivery", "a webhook delivery", "GET", delivery_path(), 200).with_body(
        body, content_type="application/json"
    )
    with pact.serve() as server:
        delivery = webhooks(str(server.url)).call("GET", f"/webhook-configs/{ENDPOINT}/deliveries/{DELIVERY}", CREDENTIAL)
    assert (delivery["status"], delivery["attempts"]) == ("PENDING", [])


def test_a_retry_goes_to_the_new_delivery(pact: Pact):
    called(pact, "a retry of a webhook delivery", "a webhook delivery", "POST", delivery_path("/retry"), 202).with_body(
        {"id": match.uuid(DELIVERY)}, content_type="application/json"
    )
    with pact.serve() as server:
        retried = webhooks(str(server.url)).call("POST", f"/webhook-configs/{ENDPOINT}/deliveries/{DELIVERY}/retry",
                                                 CREDENTIAL)
    assert retried["id"] == DELIVERY


def test_the_endpoint_form_offers_the_event_catalogue(pact: Pact):
    called(pact, "the webhook event types", "an organization", "GET", BASE + "/webhook-event-types", 200).with_body(
        {"eventTypes": match.each_like({"type": match.str("quote.approved"), "description": match.str("Approved.")})},
        content_type="application/json",
    )
    with pact.serve() as server:
        types = EventCatalogue(webhooks(str(server.url))).types(CREDENTIAL)
    assert types == [{"type": "quote.approved", "description": "Approved."}]


RATE_LIMITED_FORM = {**FORM, "rateLimitPerSecond": 5}


def test_the_endpoint_page_shows_its_requests_per_second(pact: Pact):
    body = {**endpoint_body(), "rateLimitPerSecond": match.int(5)}
    called(pact, "a webhook endpoint with a rate limit", "a webhook endpoint limited to 5 requests a second", "GET",
           endpoint_path(), 200).with_body(body, content_type="application/json")
    with pact.serve() as server:
        endpoint = webhooks(str(server.url)).call("GET", f"/webhook-configs/{ENDPOINT}", CREDENTIAL)
    assert endpoint["rateLimitPerSecond"] == 5


def test_adding_an_endpoint_with_a_rate_limit(pact: Pact):
    key, matcher = once("c")
    (
        called(pact, "a new webhook endpoint with a rate limit", "an organization", "POST", BASE + "/webhook-configs", 201)
        .with_header("Idempotency-Key", matcher, part="Request")
        .with_body(RATE_LIMITED_FORM, content_type="application/json", part="Request")
        .with_body({"id": match.uuid(ENDPOINT), "rateLimitPerSecond": match.int(5)}, content_type="application/json")
    )
    with pact.serve() as server:
        created = webhooks(str(server.url)).call("POST", "/webhook-configs", CREDENTIAL, json=RATE_LIMITED_FORM, once=key)
    assert created["rateLimitPerSecond"] == 5


def test_a_rate_limit_out_of_range_is_shown_beside_its_field(pact: Pact):
    form = {**FORM, "rateLimitPerSecond": 5000}
    key, matcher = once("d")
    (
        called(pact, "a new webhook endpoint with a rate limit out of range", "an organization", "POST",
               BASE + "/webhook-configs", 400)
        .with_header("Idempotency-Key", matcher, part="Request")
        .with_body(form, content_type="application/json", part="Request")
        .with_body({
            "errors": match.each_like({"field": match.regex("rateLimitPerSecond", regex=r"^rateLimitPerSecond$"),
                                       "message": match.str("must be at most 1000")}),
        }, content_type="application/problem+json")
    )
    with pact.serve() as server, pytest.raises(ServiceRefused) as refused:
        webhooks(str(server.url)).call("POST", "/webhook-configs", CREDENTIAL, json=form, once=key)
    assert list(refused.value.problem.fields) == ["rateLimitPerSecond"]


SINCE = "2027-01-01T09:00:00Z"
UNTIL = "2027-01-01T11:00:00Z"
RFC3339_SECOND = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"  # what the console's form sends


def window(until: bool = True) -> dict[str, Any]:
    """The recovery's window as the console sends it, made by the provider state within its 30-day history."""
    sent = {"since": from_state(SINCE, RFC3339_SECOND, "${since}")}
    return {**sent, "until": from_state(UNTIL, RFC3339_SECOND, "${until}")} if until else sent


def test_recovering_an_endpoints_failed_deliveries(pact: Pact):
    key, matcher = once("e")
    (
        called(pact, "a recovery of a webhook endpoint's failed deliveries", "a webhook endpoint with an exhausted delivery",
               "POST", endpoint_path("/recover"), 202)
        .with_header("Idempotency-Key", matcher, part="Request")
        .with_body(window(), content_type="application/json", part="Request")
        .with_body({"recovered": match.int(1), "hasMore": match.bool(False), "until": AT}, content_type="application/json")
    )
    with pact.serve() as server:
        answer = webhooks(str(server.url)).call("POST", f"/webhook-configs/{ENDPOINT}/recover", CREDENTIAL,
                                                json={"since": SINCE, "until": UNTIL}, once=key)
    assert (answer["recovered"], answer["hasMore"]) == (1, False)


def test_a_disabled_endpoint_is_not_recovered(pact: Pact):
    key, matcher = once("f")
    (
        called(pact, "a recovery of a disabled webhook endpoint's failed deliveries", "a disabled webhook endpoint",
               "POST", endpoint_path("/recover"), 409)
        .with_header("Idempotency-Key", matcher, part="Request")
        .with_body(window(until=False), content_type="application/json", part="Request")
        .with_body({"title": match.str("The endpoint is disabled")}, content_type="application/problem+json")
    )
    with pact.serve() as server, pytest.raises(ServiceRefused) as refused:
        webhooks(str(server.url)).call("POST", f"/webhook-configs/{ENDPOINT}/recover", CREDENTIAL,
                                       json={"since": SINCE}, once=key)
    assert refused.value.problem.status == 409


def traffic_body(hours: int) -> dict[str, Any]:
    """What the endpoint page reads of its traffic."""
    return {
        "from": AT, "until": AT,
        "hours": match.each_like({"start": AT, "succeeded": match.int(1), "failed": match.int(0)}, min=hours),
        "succeeded": match.int(1), "failed": match.int(0),
        "timeToSuccessMs": {"p50": match.int(120), "p95": match.int(120)},
    }


@pytest.mark.parametrize(("window_name", "hours"), [("24h", 24), ("7d", 168)])
def test_the_endpoint_page_shows_its_traffic(pact: Pact, window_name: str, hours: int):
    (
        called(pact, f"a webhook endpoint's traffic over {window_name}", "a webhook endpoint with traffic", "GET",
               endpoint_path("/stats"), 200)
        .with_query_parameter("window", window_name)
        .with_body(traffic_body(hours), content_type="application/json")
    )
    with pact.serve() as server:
        stats = webhooks(str(server.url)).call("GET", f"/webhook-configs/{ENDPOINT}/stats", CREDENTIAL,
                                               params={"window": window_name})
    assert stats["hours"][0]["succeeded"] == 1 and stats["timeToSuccessMs"]["p50"] == 120  # at least `hours` hours


SIGNED_HEADERS = {
    "Content-Type": match.str("application/json"),
    "webhook-id": match.uuid(DELIVERY),
    "webhook-timestamp": match.regex("1798797600", regex=r"^\d+$"),
    "webhook-signature": match.regex("v1,c2lnbmF0dXJl", regex=r"^v1,\S+$"),
    "X-Service-Delivery-Id": match.uuid(DELIVERY),
    "X-Service-Attempt": match.regex("1", regex=r"^\d+$"),
}


def test_a_delivery_shows_its_request_as_sent(pact: Pact):
    attempt = {"attempt": match.int(1), "attemptedAt": AT, "responseStatus": match.int(200),
               "responseExcerpt": match.str("ok"), "durationMs": match.int(84), "requestHeaders": SIGNED_HEADERS}
    body = {**delivery_body(), "request": {"method": "POST", "url": match.str(URL), "body": match.str('{"id":"evt"}')},
            "attempts": match.each_like(attempt)}
    called(pact, "a webhook delivery with its request as sent", "a webhook delivery that was attempted", "GET",
           delivery_path(), 200).with_body(body, content_type="application/json")
    with pact.serve() as server:
        delivery = webhooks(str(server.url)).call("GET", f"/webhook-configs/{ENDPOINT}/deliveries/{DELIVERY}", CREDENTIAL)
    assert delivery["request"]["body"] == '{"id":"evt"}'
    assert delivery["attempts"][0]["requestHeaders"]["webhook-signature"].startswith("v1,")
