"""Faults a test switches on: 429 and 500 answers, latency, dropped connections."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
import stripe

from dps_billing_stand_in import BillingStandIn

from billing_stand_in_helpers import Api, error_of


def test_429_for_the_next_n_calls_with_retry_after(api: Api, stand_in: BillingStandIn) -> None:
    stand_in.faults.add(path_prefix="/v1/", status=429, retry_after=1, count=2)
    for _ in range(2):
        answer = api.post("/v1/products", {"name": "W"}, key="k-1")
        error = error_of(answer, 429)
        assert error["code"] == "rate_limit" and answer.headers["Retry-After"] == "1"
        assert "Stripe-Should-Retry" not in answer.headers
    answer = api.post("/v1/products", {"name": "W"}, key="k-1")
    assert answer.status_code == 200 and "Idempotent-Replayed" not in answer.headers  # a 429 is not stored
    assert [r.status for r in stand_in.requests(path="/v1/products")] == [429, 429, 200]


def test_429_without_retry_after_and_with_a_retry_hint(api: Api, stand_in: BillingStandIn) -> None:
    stand_in.faults.add("/v1/", 429, count=1, should_retry=False)
    answer = api.get("/v1/products")
    assert answer.status_code == 429 and "Retry-After" not in answer.headers
    assert answer.headers["Stripe-Should-Retry"] == "false"
    stand_in.faults.add("/v1/", 429, count=1, code="lock_timeout")
    assert error_of(api.get("/v1/products"), 429)["code"] == "lock_timeout"


def test_500_says_retry_and_is_not_stored(api: Api, stand_in: BillingStandIn) -> None:
    stand_in.faults.add("/v1/products", 500, count=1)
    answer = api.post("/v1/products", {"name": "W"}, key="k-2")
    assert error_of(answer, 500)["type"] == "api_error" and answer.headers["Stripe-Should-Retry"] == "true"
    assert api.post("/v1/products", {"name": "W"}, key="k-2").status_code == 200
    assert len(stand_in.objects("product")) == 1


def test_the_stripe_package_retries_a_500_with_the_same_key(stand_in: BillingStandIn, grant: dict[str, str]) -> None:
    client = stripe.StripeClient(grant["access_token"], base_addresses={"api": stand_in.api_url},
                                 max_network_retries=2)
    stand_in.faults.add("/v1/products", 500, count=1)
    client.v1.products.create(params={"name": "W"})
    attempts = stand_in.requests(path="/v1/products")
    assert [a.status for a in attempts] == [500, 200]
    assert attempts[0].idempotency_key == attempts[1].idempotency_key


def test_faults_match_their_path_prefix_and_method(api: Api, stand_in: BillingStandIn) -> None:
    stand_in.faults.add("/v1/prices", 500)
    stand_in.faults.add("/v1/products", 500, method="GET")
    assert api.post("/v1/products", {"name": "W"}).status_code == 200
    assert api.get("/v1/products").status_code == 500
    assert api.post("/v1/prices", {}).status_code == 500
    stand_in.faults.clear()
    assert api.get("/v1/products").status_code == 200


def test_a_fraction_of_calls(api: Api, stand_in: BillingStandIn) -> None:
    fault = stand_in.faults.add("/v1/products", 500, fraction=0.5)
    statuses = [api.get("/v1/products").status_code for _ in range(30)]
    assert statuses.count(500) == fault.fired and 0 < fault.fired < 30
    assert set(statuses) == {200, 500}


def test_latency(api: Api, stand_in: BillingStandIn) -> None:
    stand_in.faults.latency(0.3, path_prefix="/v1/products", count=1)
    assert api.get("/v1/products").status_code == 200
    assert api.get("/v1/prices").status_code == 200
    assert stand_in.requests(path="/v1/products")[0].duration >= 0.3
    stand_in.faults.latency(2, path_prefix="/v1/products", count=1)
    with pytest.raises(requests.Timeout):
        requests.get(stand_in.api_url + "/v1/products", headers={"Authorization": f"Bearer {api.token}"},
                     timeout=0.2)


def test_a_dropped_connection_gets_no_answer(api: Api, stand_in: BillingStandIn) -> None:
    stand_in.faults.drop(1, path_prefix="/v1/products")
    with pytest.raises(requests.ConnectionError):
        api.post("/v1/products", {"name": "W"}, key="k-3")
    assert stand_in.objects("product") == []
    assert api.post("/v1/products", {"name": "W"}, key="k-3").status_code == 200
    dropped, answered = stand_in.requests(path="/v1/products")
    assert dropped.dropped and dropped.status is None and answered.status == 200


def test_a_drop_after_processing_loses_the_answer_but_not_the_object(api: Api, stand_in: BillingStandIn) -> None:
    stand_in.faults.drop(1, path_prefix="/v1/products", after_processing=True)
    with pytest.raises(requests.ConnectionError):
        api.post("/v1/products", {"name": "W"}, key="k-4")
    [created] = stand_in.objects("product")
    retry = api.post("/v1/products", {"name": "W"}, key="k-4")
    assert retry.headers["Idempotent-Replayed"] == "true" and retry.json()["id"] == created["id"]


def test_the_stripe_package_retries_a_dropped_connection(stand_in: BillingStandIn, grant: dict[str, str]) -> None:
    client = stripe.StripeClient(grant["access_token"], base_addresses={"api": stand_in.api_url},
                                 max_network_retries=1)
    stand_in.faults.drop(1, path_prefix="/v1/products", after_processing=True)
    created = client.v1.products.create(params={"name": "W"})
    assert [p["id"] for p in stand_in.objects("product")] == [created.id]


def test_fault_arguments_are_checked(stand_in: BillingStandIn) -> None:
    with pytest.raises(ValueError):
        stand_in.faults.add(status=200)
    with pytest.raises(ValueError):
        stand_in.faults.drop(0)
    with pytest.raises(ValueError):
        stand_in.faults.latency(1, fraction=1.5)


def test_a_hold_keeps_calls_received_until_released(api: Api, stand_in: BillingStandIn) -> None:
    """Held calls have claimed their idempotency keys (a second request with one gets 409) and take
    effect only once released; the test knows they were received without timing anything."""
    held = stand_in.faults.hold(path_prefix="/v1/products", method="POST")
    with ThreadPoolExecutor(2) as pool:
        answers = [pool.submit(api.post, "/v1/products", {"name": f"W{n}"}, key=f"held-{n}") for n in (1, 2)]
        stand_in.faults.wait_held(held, 2, timeout=10)
        assert stand_in.objects("product") == [] and stand_in.requests(path="/v1/products") == []
        assert error_of(api.post("/v1/products", {"name": "W1"}, key="held-1"), 409)["code"] == "idempotency_key_in_use"
        assert api.get("/v1/products").status_code == 200  # other calls go on
        stand_in.faults.release(held)
        assert [a.result().status_code for a in answers] == [200, 200]
    assert sorted(p["name"] for p in stand_in.objects("product")) == ["W1", "W2"]
    assert held.held == 0 and held not in stand_in.faults.active()
    assert api.post("/v1/products", {"name": "W3"}).status_code == 200  # released: no longer held
