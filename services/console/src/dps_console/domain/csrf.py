"""CSRF tokens: an HMAC of what the browser's cookie holds (the session id, or before sign-in the
pre-session id), so a token is good only with its own cookie; and the cross-site check of a POST
by its Origin and Sec-Fetch-Site headers."""

from __future__ import annotations

import hashlib
import hmac


def csrf_token(key: bytes, binding: str) -> str:
    return hmac.new(key, b"csrf:" + binding.encode(), hashlib.sha256).hexdigest()


def csrf_valid(key: bytes, binding: str | None, token: str | None) -> bool:
    if not binding or not token:
        return False
    return hmac.compare_digest(csrf_token(key, binding), token)


def cross_site(origin: str | None, fetch_site: str | None, own_origin: str) -> bool:
    """True when the browser says the request comes from another site: a POST is then refused.

    ``Sec-Fetch-Site`` decides when the browser sends it (every current one does). Otherwise
    ``Origin`` is compared, except ``null``: a browser sends that for a same-origin POST from a
    page served with ``Referrer-Policy: no-referrer``, so it tells nothing. Browsers that send
    neither header (old ones, non-browsers) rely on the CSRF token alone."""
    if fetch_site is not None:
        return fetch_site.lower() not in ("same-origin", "none")
    if origin is not None and origin != "null" and origin.rstrip("/").lower() != own_origin.lower():
        return True
    return False
