"""Products, prices and draft quotes on the billing platform, through the official ``stripe`` package.

Each create carries the idempotency key its caller chose (derived from the push and the object, so a
push retried after a crash finds the objects it already made instead of making them twice). The
package's own retries are off; ``Retrier`` retries instead (it also retries 429 and honours
``Retry-After``), and the pacer is asked before every attempt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

import stripe
from stripe.params import PriceCreateParams, ProductCreateParams, QuoteCreateParams

from dps_billing.adapters.billing_platform.pacing import NoPacing, Pacer, turn_of
from dps_billing.adapters.billing_platform.retry import Retrier
from dps_billing.adapters.billing_platform.stripe_errors import header, translate
from dps_billing.domain.plan import PriceParams, ProductParams, QuoteParams

DEFAULT_TIMEOUT = (5.0, 30.0)  # seconds to connect, seconds between bytes of the answer
MAX_IDEMPOTENCY_KEY_LENGTH = 255

_O = TypeVar("_O", bound=stripe.StripeObject)


@dataclass(frozen=True)
class Created:
    id: str
    replayed: bool  # the platform answered from its idempotency store: the object existed already


def new_http_client(timeout: float | tuple[float, float] = DEFAULT_TIMEOUT) -> stripe.HTTPClient:
    """One per process: it keeps a connection pool per thread, shared by every account's client."""
    return stripe.RequestsClient(timeout=timeout)


class BillingClient:
    """Calls made with one account's access token (sent as the API key; no ``Stripe-Account``)."""

    def __init__(self, access_token: str, account_id: str, *, api_url: str,
                 http_client: stripe.HTTPClient | None = None, pacer: Pacer | None = None,
                 retrier: Retrier | None = None) -> None:
        self.account_id = account_id
        self._api_url = api_url.rstrip("/")
        self._http_client = http_client or new_http_client()
        self._pacer: Pacer = pacer or NoPacing()
        self._retrier = retrier or Retrier()
        self._stripe = stripe.StripeClient(
            access_token,
            base_addresses={"api": self._api_url},
            http_client=self._http_client,
            max_network_retries=0,  # retried by Retrier, which knows 429 and Retry-After
        )

    def with_access_token(self, access_token: str) -> BillingClient:
        """The same client with a refreshed token (after ``PlatformUnauthorized``)."""
        return BillingClient(access_token, self.account_id, api_url=self._api_url, http_client=self._http_client,
                             pacer=self._pacer, retrier=self._retrier)

    def create_product(self, product: ProductParams, *, idempotency_key: str) -> Created:
        params: ProductCreateParams = {"name": product.name, "metadata": dict(product.metadata)}
        return self._create(lambda options: self._stripe.v1.products.create(params, options), idempotency_key)

    def create_price(self, price: PriceParams, *, product_id: str, idempotency_key: str) -> Created:
        params: PriceCreateParams = {"currency": price.currency, "product": product_id,
                                     "unit_amount": price.unit_amount}
        if price.recurring is not None:
            params["recurring"] = {"interval": _interval(price.recurring.interval),
                                   "interval_count": price.recurring.interval_count}
        return self._create(lambda options: self._stripe.v1.prices.create(params, options), idempotency_key)

    def create_quote(self, quote: QuoteParams, *, price_ids: Mapping[str, str], idempotency_key: str) -> Created:
        """A draft quote; ``price_ids`` maps each line item's quote line id to the price created for it."""
        missing = [item.line_id for item in quote.line_items if item.line_id not in price_ids]
        if missing:
            raise ValueError(f"no price id for quote lines {', '.join(missing)}")
        params: QuoteCreateParams = {
            "description": quote.description,
            "line_items": [{"price": price_ids[item.line_id], "quantity": item.quantity}
                           for item in quote.line_items],
            "expires_at": quote.expires_at,
            "metadata": dict(quote.metadata),
            "subscription_data": {"metadata": dict(quote.subscription_metadata)},
        }
        if quote.effective_date is not None:
            params["subscription_data"]["effective_date"] = quote.effective_date
        return self._create(lambda options: self._stripe.v1.quotes.create(params, options), idempotency_key)

    def _create(self, call: Callable[[stripe.RequestOptions], _O], idempotency_key: str) -> Created:
        if not idempotency_key or len(idempotency_key) > MAX_IDEMPOTENCY_KEY_LENGTH:
            raise ValueError(f"an idempotency key is 1 to {MAX_IDEMPOTENCY_KEY_LENGTH} characters")
        options: stripe.RequestOptions = {"idempotency_key": idempotency_key}

        def attempt() -> Created:
            try:
                with turn_of(self._pacer, self.account_id):
                    created = call(options)
            except stripe.StripeError as error:
                raise translate(error) from error
            response = created.last_response
            replayed = response is not None and header(response.headers, "Idempotent-Replayed") == "true"
            return Created(id=str(created["id"]), replayed=replayed)

        return self._retrier.run(attempt)


def _interval(interval: str) -> Literal["day", "month", "week", "year"]:
    if interval == "month":
        return "month"
    if interval == "year":
        return "year"
    raise ValueError(f"unsupported recurring interval {interval!r}")
