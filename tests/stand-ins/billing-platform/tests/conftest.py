from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import stripe

from dps_billing_stand_in import BillingStandIn

from billing_stand_in_helpers import (
    CLIENT_ID,
    REDIRECT_URI,
    SECRET_KEY,
    WEBHOOK_SECRET,
    Api,
    Receiver,
    connect,
    running_receiver,
)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as started:
        yield started


@pytest.fixture
def stand_in(receiver: Receiver) -> Iterator[BillingStandIn]:
    with BillingStandIn.start(
        secret_key=SECRET_KEY,
        client_id=CLIENT_ID,
        redirect_uris=[REDIRECT_URI],
        webhook_url=receiver.url,
        webhook_secret=WEBHOOK_SECRET,
        seed=7,
    ) as started:
        yield started


@pytest.fixture
def grant(stand_in: BillingStandIn) -> dict[str, Any]:
    return connect(stand_in)


@pytest.fixture
def api(stand_in: BillingStandIn, grant: dict[str, Any]) -> Api:
    return Api(stand_in.api_url, grant["access_token"])


@pytest.fixture
def client(stand_in: BillingStandIn, grant: dict[str, Any]) -> stripe.StripeClient:
    return stripe.StripeClient(grant["access_token"], base_addresses={"api": stand_in.api_url})
