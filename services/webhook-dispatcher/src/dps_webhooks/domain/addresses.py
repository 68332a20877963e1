"""Which IP addresses a webhook may be delivered to (SSRF defence).

Only globally reachable unicast addresses are allowed. Every IPv6 form that carries an IPv4 address
is judged by the IPv4 address it carries, because the packet can end up there (a dual-stack socket,
a 6to4 relay, a NAT64 gateway, a Teredo tunnel). The translation prefixes themselves are refused
even around a public IPv4 address: a receiver has no reason to be reached through one, and which
IPv4 host they reach depends on gateways we do not control. The tables are checked most specific
first; anything they miss that Python does not consider global is refused as a catch-all.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_N = ipaddress.ip_network

# (network, reason); the first match wins, so the narrow entries come before the ranges holding them.
_IPV4_REFUSED: tuple[tuple[IPNetwork, str], ...] = (
    (_N("169.254.169.254/32"), "a cloud metadata address"),
    (_N("100.100.100.200/32"), "a cloud metadata address"),
    (_N("255.255.255.255/32"), "the broadcast address"),
    (_N("0.0.0.0/8"), "an unspecified address"),
    (_N("10.0.0.0/8"), "a private address"),
    (_N("100.64.0.0/10"), "a carrier-grade NAT address"),
    (_N("127.0.0.0/8"), "a loopback address"),
    (_N("169.254.0.0/16"), "a link-local address"),
    (_N("172.16.0.0/12"), "a private address"),
    (_N("192.0.0.0/24"), "a reserved address"),  # IETF protocol assignments
    (_N("192.0.2.0/24"), "a documentation address"),
    (_N("192.88.99.0/24"), "a reserved address"),  # former 6to4 relay anycast
    (_N("192.168.0.0/16"), "a private address"),
    (_N("198.18.0.0/15"), "a benchmarking address"),
    (_N("198.51.100.0/24"), "a documentation address"),
    (_N("203.0.113.0/24"), "a documentation address"),
    (_N("224.0.0.0/4"), "a multicast address"),
    (_N("240.0.0.0/4"), "a reserved address"),
)

_IPV6_REFUSED: tuple[tuple[IPNetwork, str], ...] = (
    (_N("::/128"), "an unspecified address"),
    (_N("::1/128"), "a loopback address"),
    (_N("fd00:ec2::254/128"), "a cloud metadata address"),
    (_N("64:ff9b:1::/48"), "a local-use NAT64 address"),  # where the IPv4 part sits is local policy
    (_N("100::/64"), "a reserved address"),  # discard-only
    (_N("2001:2::/48"), "a benchmarking address"),
    (_N("2001:db8::/32"), "a documentation address"),
    (_N("3fff::/20"), "a documentation address"),
    (_N("fc00::/7"), "a unique local address"),
    (_N("fe80::/10"), "a link-local address"),
    (_N("fec0::/10"), "a site-local address"),
    (_N("ff00::/8"), "a multicast address"),
)

_IPV4_COMPATIBLE = _N("::/96")
_IPV4_TRANSLATED = _N("::ffff:0:0:0/96")
_NAT64 = _N("64:ff9b::/96")


def refusal(address: IPAddress) -> str | None:
    """Why ``address`` must not receive a webhook (e.g. "a loopback address"), or None."""
    if isinstance(address, ipaddress.IPv4Address):
        return _first_match(address, _IPV4_REFUSED) or _not_global(address)
    for network, reason in _IPV6_REFUSED:
        if address in network:
            return reason
    embedded = embedded_ipv4(address)
    if embedded is not None:
        mechanism, ipv4 = embedded
        inner = refusal(ipv4)
        if inner:
            return f"{inner} ({ipv4}) inside {mechanism}"
        if mechanism != "an IPv4-mapped address":  # mapped is plain IPv4 on a dual-stack socket
            return mechanism
        return None
    return _not_global(address)


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 address carries, with the name of the mechanism carrying it."""
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        return "an IPv4-mapped address", address.ipv4_mapped
    if address in _IPV4_TRANSLATED:
        return "an IPv4-translated address", low32
    if address in _IPV4_COMPATIBLE:  # :: and ::1 are matched before this is asked
        return "an IPv4-compatible address", low32
    if address in _NAT64:
        return "a NAT64 address", low32
    if address.sixtofour is not None:
        return "a 6to4 address", address.sixtofour
    if address.teredo is not None:
        server, client = address.teredo
        # the client is where the traffic goes; a refused server is refused all the same
        worst = client if refusal(client) or not refusal(server) else server
        return "a Teredo address", worst
    return None


def is_allowed(address: IPAddress, allowed_networks: Iterable[IPNetwork] = ()) -> bool:
    """A public address, or one inside a network the operator listed (tests, private installs)."""
    candidates = [address]
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        candidates.append(address.ipv4_mapped)
    if any(candidate in network for candidate in candidates for network in allowed_networks):
        return True
    return refusal(address) is None


def _first_match(address: IPAddress, table: tuple[tuple[IPNetwork, str], ...]) -> str | None:
    for network, reason in table:
        if address in network:
            return reason
    return None


def _not_global(address: IPAddress) -> str | None:
    return None if address.is_global else "a non-public address"
