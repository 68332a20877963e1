"""The api's quote snapshot, read over its internal HTTP contract (never its tables):
``GET {API_URL}/internal/v1/organizations/{org}/pricing-quotes/{quote}/snapshot`` with the internal
bearer token. 404 there (unknown quote, or another organization's) is a 404 here."""

from __future__ import annotations

import logging
from uuid import UUID

import requests

from dps_common import request_id
from dps_common.errors import ServiceUnavailable, UpstreamFailed, not_found

from dps_billing.domain.quote_snapshot import QUOTE, QuoteSnapshot, SnapshotError

log = logging.getLogger("dps.billing.snapshots")
_TIMEOUT_SECONDS = (3, 10)  # connect, read


class SnapshotReader:
    def __init__(self, api_url: str, token: str, *, verify: str | bool = True):
        self._base = api_url.rstrip("/") + "/internal/v1/organizations"
        self._session = requests.Session()  # keep-alive to the api
        self._session.trust_env = False
        self._session.headers["Authorization"] = f"Bearer {token}"
        self._session.verify = verify

    def read(self, organization_id: UUID, quote_id: UUID) -> QuoteSnapshot:
        url = f"{self._base}/{organization_id}/pricing-quotes/{quote_id}/snapshot"
        try:
            # the request id of the push request that reads it: the api logs the read under it
            resp = self._session.get(url, headers=request_id.outgoing_headers(), timeout=_TIMEOUT_SECONDS)
        except requests.RequestException as exc:
            raise ServiceUnavailable(
                "The pricing quote cannot be read right now; retry shortly.", code="quote_unavailable"
            ) from exc
        if resp.status_code == 404:
            raise not_found(QUOTE)
        if resp.status_code != 200:
            log.warning("quote snapshot refused", extra={"status": resp.status_code, "quoteId": str(quote_id)})
            raise ServiceUnavailable(
                "The pricing quote cannot be read right now; retry shortly.", code="quote_unavailable"
            )
        try:
            snapshot = QuoteSnapshot.from_json(resp.json())
        except (ValueError, SnapshotError) as exc:
            log.error("quote snapshot malformed", extra={"quoteId": str(quote_id), "reason": str(exc)})
            raise UpstreamFailed("The pricing quote could not be read.", code="quote_snapshot_invalid") from None
        if snapshot.id != quote_id or snapshot.organization_id != organization_id:
            raise UpstreamFailed("The pricing quote could not be read.", code="quote_snapshot_invalid")
        return snapshot
