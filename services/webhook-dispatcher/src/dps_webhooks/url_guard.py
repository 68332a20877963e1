"""Vetting a receiver URL: at registration and again before every attempt.

``vet_url`` resolves the host once and refuses the URL unless EVERY address it resolves to is
allowed (an attacker's DNS can mix a public and a private answer). The caller connects to the one
vetted ``Target.address`` and never resolves again, so DNS rebinding between the check and the
connection cannot redirect the request. IP literals in any spelling the resolver accepts (decimal
``2130706433``, hex ``0x7f000001``, short ``127.1``, octal) are parsed to the address they mean and
classified like any other.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from dps_webhooks.domain.addresses import IPAddress, IPNetwork, is_allowed, refusal

DEFAULT_PORT = 443


class UrlRefused(ValueError):
    """The URL may not receive webhooks; the message says why (safe to show to the caller)."""


@dataclass(frozen=True)
class Target:
    host: str  # as written in the URL, lowercased, without brackets: the TLS name and Host header
    port: int
    path_and_query: str
    address: str  # the vetted IP to connect to

    @property
    def authority(self) -> str:
        """The Host header value."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORT else f"{host}:{self.port}"


def vet_url(url: str, allowed_networks: Iterable[IPNetwork] = ()) -> Target:
    """The URL's target with the address to connect to; ``UrlRefused`` when it is not allowed."""
    host, port, path_and_query = _parse(url)
    addresses = _resolve(host, port)
    networks = tuple(allowed_networks)
    for address in addresses:
        if not is_allowed(address, networks):
            raise UrlRefused(f"host resolves to {refusal(address)} ({address})")
    chosen = addresses[0]
    if isinstance(chosen, ipaddress.IPv6Address) and chosen.ipv4_mapped is not None:
        chosen = chosen.ipv4_mapped  # the same host, reached over IPv4
    return Target(host, port, path_and_query, str(chosen))


@lru_cache(maxsize=4096)  # pure; every attempt to an endpoint parses the same URL (refusals raise: not cached)
def _parse(url: str) -> tuple[str, int, str]:
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise UrlRefused("must not contain whitespace or control characters")
    try:
        parts = urlsplit(url)
        port = DEFAULT_PORT if parts.port is None else parts.port
    except ValueError as exc:
        raise UrlRefused(f"is not a valid URL: {exc}") from None
    if parts.scheme.lower() != "https":
        raise UrlRefused("must use https")
    if "@" in parts.netloc:
        raise UrlRefused("must not contain credentials")
    host = (parts.hostname or "").rstrip(".") if parts.hostname != "." else ""
    if not host:
        raise UrlRefused("must have a host")
    if port == 0:
        raise UrlRefused("must not use port 0")
    if "%" in host:
        raise UrlRefused("must not contain an IPv6 zone")
    path_and_query = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return host, port, path_and_query


def _resolve(host: str, port: int) -> list[IPAddress]:
    literal = _ip_literal(host)
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise UrlRefused("host does not resolve") from None
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise UrlRefused("host does not resolve")
    return addresses


def _ip_literal(host: str) -> IPAddress | None:
    """An IP written in the URL, in any form the C resolver would accept as one."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:  # inet_aton: decimal, hex, octal and short forms ("2130706433", "0x7f.1", "127.1")
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None
