"""Idempotency keys as Stripe keeps them: replay, conflicts, in-flight keys, stored failures, expiry."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import requests
import stripe

from dps_billing_stand_in import BillingStandIn

from billing_stand_in_helpers import Api, connect, error_of


def test_the_same_key_and_parameters_replay_the_first_answer(api: Api, stand_in: BillingStandIn) -> None:
    first = api.post("/v1/products", {"name": "Widget"}, key="k-1")
    again = api.post("/v1/products", {"name": "Widget"}, key="k-1")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert again.headers["Original-Request"] == first.headers["Request-Id"] != again.headers["Request-Id"]
    assert len(stand_in.objects("product")) == 1
    assert [r.replayed for r in stand_in.requests(path="/v1/products")] == [False, True]


def test_the_same_key_with_other_parameters_is_an_idempotency_error(api: Api, client: stripe.StripeClient) -> None:
    api.post("/v1/products", {"name": "Widget"}, key="k-2")
    error = error_of(api.post("/v1/products", {"name": "Gadget"}, key="k-2"), 400)
    assert error["type"] == "idempotency_error" and "same parameters" in error["message"]
    elsewhere = error_of(api.post("/v1/quotes", {}, key="k-2"), 400)
    assert elsewhere["type"] == "idempotency_error" and "same endpoint" in elsewhere["message"]
    with pytest.raises(stripe.IdempotencyError):
        client.v1.products.create(params={"name": "Other"}, options={"idempotency_key": "k-2"})


def test_a_validation_error_is_not_stored(api: Api, stand_in: BillingStandIn) -> None:
    assert api.post("/v1/products", {"name": ""}, key="k-3").status_code == 400
    assert api.post("/v1/products", {"name": ""}, key="k-3").headers.get("Idempotent-Replayed") is None
    fixed = api.post("/v1/products", {"name": "Widget"}, key="k-3")
    assert fixed.status_code == 200 and "Idempotent-Replayed" not in fixed.headers


def test_a_key_still_in_flight_is_409_and_not_stored(api: Api, stand_in: BillingStandIn) -> None:
    stand_in.faults.latency(1.0, path_prefix="/v1/products", count=1)
    answers: list[requests.Response] = []
    slow = threading.Thread(target=lambda: answers.append(api.post("/v1/products", {"name": "W"}, key="k-4")))
    slow.start()
    deadline = time.monotonic() + 5
    while stand_in.faults.active() and time.monotonic() < deadline:
        time.sleep(0.01)  # until the slow call has taken its latency (and holds the key)
    error = error_of(api.post("/v1/products", {"name": "W"}, key="k-4"), 409)
    assert error["type"] == "idempotency_error" and error["code"] == "idempotency_key_in_use"
    assert "another request with the same key is in progress" in error["message"]
    slow.join()
    assert answers[0].status_code == 200
    replay = api.post("/v1/products", {"name": "W"}, key="k-4")
    assert replay.headers["Idempotent-Replayed"] == "true" and replay.json()["id"] == answers[0].json()["id"]
    assert len(stand_in.objects("product")) == 1


def test_a_stored_500_is_replayed(api: Api, stand_in: BillingStandIn) -> None:
    stand_in.faults.add("/v1/products", 500, stored=True, count=1)
    first = api.post("/v1/products", {"name": "W"}, key="k-5")
    assert first.status_code == 500 and first.headers["Stripe-Should-Retry"] == "false"
    again = api.post("/v1/products", {"name": "W"}, key="k-5")
    assert again.status_code == 500 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json() and first.json()["error"]["type"] == "api_error"
    assert api.post("/v1/products", {"name": "W"}, key="k-6").status_code == 200


@pytest.mark.parametrize("expire", ["method", "clock"])
def test_keys_expire_after_24_hours(api: Api, stand_in: BillingStandIn, expire: str) -> None:
    first = api.post("/v1/products", {"name": "W"}, key="k-7").json()
    if expire == "method":
        stand_in.expire_idempotency_keys()
    else:
        stand_in.advance_clock(24 * 3600)
        stand_in.expire_access_tokens()  # the token is an hour old by now, too
        api.token = connect(stand_in)["access_token"]
    second = api.post("/v1/products", {"name": "Other"}, key="k-7")
    assert second.status_code == 200 and second.json()["id"] != first["id"]


def test_keys_belong_to_one_account(stand_in: BillingStandIn, api: Api) -> None:
    other = Api(stand_in.api_url, connect(stand_in)["access_token"])
    assert api.post("/v1/products", {"name": "A"}, key="k-8").status_code == 200
    answer = other.post("/v1/products", {"name": "B"}, key="k-8")
    assert answer.status_code == 200 and "Idempotent-Replayed" not in answer.headers


def test_a_key_longer_than_255_characters_is_refused(api: Api) -> None:
    assert "255" in error_of(api.post("/v1/products", {"name": "W"}, key="k" * 256), 400)["message"]
    assert api.post("/v1/products", {"name": "W"}, key="k" * 255).status_code == 200


def test_the_stripe_package_keys_each_create(client: stripe.StripeClient, stand_in: BillingStandIn,
                                            grant: dict[str, Any]) -> None:
    client.v1.products.create(params={"name": "A"})
    client.v1.products.create(params={"name": "A"})
    keys = {r.idempotency_key for r in stand_in.requests(path="/v1/products")}
    assert len(keys) == 2 and len(stand_in.objects("product")) == 2
