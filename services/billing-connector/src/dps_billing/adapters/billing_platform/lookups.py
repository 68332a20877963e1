"""Finding an object a push created when its id was never stored and its idempotency key may have
expired on the platform (keys are kept 24 hours): before creating anew, the platform's lists are read
newest first, back to shortly before the intent was recorded, for the object carrying the push's
marks (the metadata the spec writes, or the product a price belongs to).

The lists are read without a ``created`` filter (newest first, stopping at the first older object),
which Stripe and the test stand-in both serve. Ids already recorded by any push are never matched,
so an earlier push of the same quote is not taken for this one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import stripe
from stripe.params import PriceListParams, ProductListParams, QuoteListParams

from dps_billing.adapters.billing_platform.pacing import Pacer, turn_of
from dps_billing.adapters.billing_platform.retry import Retrier
from dps_billing.adapters.billing_platform.stripe_errors import translate

CLOCK_SKEW_SECONDS = 120  # the platform's clock against the database's
_PAGE = 100

Lister = Callable[[str | None], Any]  # one page of a list, after an object id


class PlatformLookups:
    def __init__(self, access_token: str, account_id: str, *, api_url: str, http_client: stripe.HTTPClient,
                 pacer: Pacer, retrier: Retrier):
        self._account_id = account_id
        self._pacer = pacer
        self._retrier = retrier
        self._stripe = stripe.StripeClient(
            access_token, base_addresses={"api": api_url.rstrip("/")}, http_client=http_client, max_network_retries=0
        )

    def find_product(self, line_id: str, since: int, known: Callable[[str], bool]) -> str | None:
        def page(after: str | None) -> Any:
            params: ProductListParams = {"limit": _PAGE}
            if after:
                params["starting_after"] = after
            return self._stripe.v1.products.list(params)

        return self._find(page, since, known, lambda obj: _metadata(obj).get("service_product_input_id") == line_id)

    def find_price(self, product_id: str, since: int, known: Callable[[str], bool]) -> str | None:
        def page(after: str | None) -> Any:
            params: PriceListParams = {"limit": _PAGE, "product": product_id}
            if after:
                params["starting_after"] = after
            return self._stripe.v1.prices.list(params)

        return self._find(page, since, known, lambda obj: obj.get("product") == product_id)

    def find_quote(self, pricing_quote_id: str, since: int, known: Callable[[str], bool]) -> str | None:
        def page(after: str | None) -> Any:
            params: QuoteListParams = {"limit": _PAGE}
            if after:
                params["starting_after"] = after
            return self._stripe.v1.quotes.list(params)

        return self._find(
            page, since, known, lambda obj: _metadata(obj).get("service_pricing_quote_id") == pricing_quote_id
        )

    def _find(self, lister: Lister, since: int, known: Callable[[str], bool],
              matches: Callable[[Any], bool]) -> str | None:
        for obj in self._newest_first(lister, since - CLOCK_SKEW_SECONDS):
            object_id = str(obj["id"])
            if matches(obj) and not known(object_id):
                return object_id
        return None

    def _newest_first(self, lister: Lister, oldest: int) -> Iterator[Any]:
        after: str | None = None
        while True:
            page = self._retrier.run(lambda: self._list(lister, after))
            for item in page.data:
                obj = item.to_dict()
                if int(obj.get("created") or 0) < oldest:
                    return
                yield obj
            if not page.has_more or not page.data:
                return
            after = str(page.data[-1].id)

    def _list(self, lister: Lister, after: str | None) -> Any:
        try:
            with turn_of(self._pacer, self._account_id):
                return lister(after)
        except stripe.StripeError as error:
            raise translate(error) from error


def _metadata(obj: Any) -> dict[str, Any]:
    metadata = obj.get("metadata")
    return dict(metadata) if metadata else {}
