"""Request budgets at the edge: per organization once authenticated, per client address otherwise.

Only the external API (``/external/v1``) is limited. Health, readiness and metrics, and the internal
service-to-service routes, are not: the ingress never routes them, so only the cluster's probes,
Prometheus and the other services reach them, and a limit there would let an outside flood (or a
Redis outage) fail the probes.

Three budgets:

- ``organization``: every request with a valid key, across the API, unknown paths (404) included:
  a key is a key wherever it is sent, so a client's typo is its organization's, not its address's.
- ``anonymous``: per client address, requests without a valid key (missing, malformed, unknown,
  revoked) and the public callbacks.
- ``documentation``: per client address, the reference page (``/external/v1/docs`` and its assets)
  and the OpenAPI document (``/external/v1/openapi.json``), generous and apart from the anonymous
  budget, so an address that spent its anonymous budget on failed keys can still read the docs (and
  reading the docs spends nothing a key probe could use).

Authenticated requests spend their organization's budget before the responder runs, so a refused
request does nothing. Requests that end before the responder (a missing or invalid key, an unknown
path, an early 413) spend after the fact: the organization's when the key was good (but lacked a
scope, or the path is unknown), the address's otherwise; they did nothing, and over budget they
become 429, so probing keys beyond the address's budget tells nothing. Every limited answer carries
the budget in the RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11); a
429 also carries Retry-After.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any
from uuid import UUID

import falcon

from dps_common.auth.authenticator import KeyAuthenticator
from dps_common.errors import RateLimited, ServiceError
from dps_common.http import problems
from dps_common.ratelimit.budget import Budget, Decision, Policy
from dps_common.ratelimit.counters import open_counter
from dps_common.ratelimit.settings import RateLimitSettings
from dps_common.settings import Network

LIMITED_PREFIX = "/external/v1/"  # with the slash: /external/v1x is not under it
ORGANIZATION_POLICY = "organization"
ANONYMOUS_POLICY = "anonymous"
DOCUMENTATION_POLICY = "documentation"
# what the documentation budget covers: the OpenAPI document (dps_common.http.app) and the api's
# reference page with everything under it (dps_api.resources.reference)
DOCUMENTATION_DOCUMENT = "/external/v1/openapi.json"
DOCUMENTATION_PAGE = "/external/v1/docs"
_LIMITED_ROOT = LIMITED_PREFIX[:-1]
_DOCUMENTATION_UNDER = DOCUMENTATION_PAGE + "/"
_DOCUMENTATION_START = "/external/v1/"  # what both documentation paths start with
MAX_ORGANIZATION_KEYS = 100_000  # organization ids remembered as their budget key, per process
log = logging.getLogger("dps.ratelimit")


def install_rate_limits(
    app: falcon.App[Any, Any], settings: RateLimitSettings, service: str, authenticator: KeyAuthenticator | None = None
) -> None:
    """Adds the middleware after the others (auth has then resolved the key; its answer is final
    before the access log reads it). ``authenticator`` resolves the key of a request to an unknown
    path, which the auth middleware does not look at. Nothing connects here: the store is reached on
    first use."""
    organization, anonymous = settings.organization_limit(), settings.anonymous_limit()
    documentation = settings.documentation_limit()
    if organization is None and anonymous is None and documentation is None:
        log.warning("rate limits are off", extra={"service": service})
        return
    if not settings.shared:
        log.warning(
            "no REDIS_URL: rate limits are counted per process (memory://), not across processes and replicas",
            extra={"service": service},
        )
    budget = Budget(open_counter(settings.storage_url, settings.key_prefix, settings.store_timeout_seconds), service,
                    lease_seconds=settings.lease_seconds)
    app.add_middleware(RateLimits(
        budget,
        Policy(ORGANIZATION_POLICY, organization) if organization else None,
        Policy(ANONYMOUS_POLICY, anonymous) if anonymous else None,
        settings.trusted_proxies,
        documentation=Policy(DOCUMENTATION_POLICY, documentation) if documentation else None,
        authenticator=authenticator,
    ))


class RateLimits:
    def __init__(self, budget: Budget, organization: Policy | None, anonymous: Policy | None,
                 trusted_proxies: tuple[Network, ...] = (), *, documentation: Policy | None = None,
                 authenticator: KeyAuthenticator | None = None):
        self._budget = budget
        self._organization = organization
        self._anonymous = anonymous
        self._documentation = documentation
        self._trusted = trusted_proxies
        self._authenticator = authenticator
        self._organization_keys: dict[UUID, str] = {}  # str(UUID) is 1-2 us, on every request

    def _organization_key(self, organization_id: UUID) -> str:
        key = self._organization_keys.get(organization_id)
        if key is None:
            if len(self._organization_keys) >= MAX_ORGANIZATION_KEYS:
                self._organization_keys.clear()
            key = self._organization_keys[organization_id] = str(organization_id)
        return key

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: object, params: dict[str, Any]
    ) -> None:
        if not _limited(req):
            return
        decision = self._spend(req)
        req.context.rate_limit = decision
        if decision is not None and not decision.allowed:
            raise _refusal(decision)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        if not _limited(req):
            return
        if "rate_limit" in req.context:
            decision = req.context.rate_limit
        else:  # ended before the responder (and before process_resource here): counted now
            if resource is None:  # an unknown path: the auth middleware did not look at the key
                self._identify(req)
            decision = self._spend(req)
            # a server-side failure (the api's key check unreachable: 503) stays what it is
            if decision is not None and not decision.allowed and resp.status_code < 500:
                problems.handle_service_error(req, resp, _refusal(decision), {})
        if decision is not None:
            _write_headers(resp, decision)

    def _identify(self, req: falcon.Request) -> None:
        """The principal of a valid key sent to an unknown path, so its organization is charged."""
        raw_key = req.get_header("x-api-key")
        if self._authenticator is None or raw_key is None or "principal" in req.context:
            return
        try:
            req.context.principal = self._authenticator.authenticate(raw_key)
        except ServiceError:  # an invalid key, or the key check unreachable: the address's budget
            pass

    def _spend(self, req: falcon.Request) -> Decision | None:
        if _documentation(req):
            if self._documentation is None:
                return None
            return self._budget.spend(self._documentation, client_address(req, self._trusted))
        principal = req.context.get("principal")
        if principal is not None:
            if self._organization is None:
                return None
            return self._budget.spend(self._organization, self._organization_key(principal.organization_id))
        if self._anonymous is None:
            return None
        return self._budget.spend(self._anonymous, client_address(req, self._trusted))


def _limited(req: falcon.Request) -> bool:
    path = req.path
    return path.startswith(LIMITED_PREFIX) or path == _LIMITED_ROOT


def _documentation(req: falcon.Request) -> bool:
    path = req.path
    return path.startswith(_DOCUMENTATION_START) and (
        path == DOCUMENTATION_DOCUMENT or path == DOCUMENTATION_PAGE or path.startswith(_DOCUMENTATION_UNDER))


def _refusal(decision: Decision) -> RateLimited:
    policy = decision.policy
    if policy.name == ORGANIZATION_POLICY:
        detail = f"This organization has used its {policy.quota} requests per {_window(policy)} across the API."
    elif policy.name == DOCUMENTATION_POLICY:
        detail = f"Too many requests for the API's documentation from this address: at most {policy.quota} per {_window(policy)}."
    else:
        detail = f"Too many requests without a valid API key from this address: at most {policy.quota} per {_window(policy)}."
    seconds = "second" if decision.reset_seconds == 1 else "seconds"
    return RateLimited(f"{detail} Retry after {decision.reset_seconds} {seconds}.")


def _window(policy: Policy) -> str:
    return "second" if policy.window_seconds == 1 else f"{policy.window_seconds} seconds"


def _write_headers(resp: falcon.Response, decision: Decision) -> None:
    # structured-field lists (RFC 9651): the policy's name is a String, the parameters Integers
    policy = decision.policy
    resp.set_header("RateLimit-Policy", policy.header)
    resp.set_header("RateLimit", f'"{policy.name}";r={decision.remaining};t={decision.reset_seconds}')
    if not decision.allowed:
        resp.set_header("Retry-After", str(decision.reset_seconds))


def client_address(req: falcon.Request, trusted: tuple[Network, ...]) -> str:
    """The address a request came from: the peer, or, when the peer is a trusted proxy, the nearest
    address in X-Forwarded-For that is not one (the entries left of it are the client's to forge).
    IPv6 clients are counted per /64, the block one subscriber is usually given."""
    address = _parse(req.remote_addr)
    if address is not None and trusted and _is_trusted(address, trusted):
        forwarded = req.get_header("X-Forwarded-For") or ""
        for hop in reversed([part.strip() for part in forwarded.split(",") if part.strip()]):
            parsed = _parse(hop)
            if parsed is None:
                break
            address = parsed
            if not _is_trusted(parsed, trusted):
                break
    if address is None:
        return req.remote_addr or "unknown"
    if address.version == 6:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _parse(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not text:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _is_trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address, trusted: tuple[Network, ...]) -> bool:
    return any(address in network for network in trusted)
