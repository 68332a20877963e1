"""Vetting a receiver URL: at registration and again before every attempt.

``vet_url`` resolves the host once and refuses the URL unless EVERY address it resolves to is
allowed (an attacker's DNS can mix a public and a private answer). The caller connects to the one
vetted ``Target.address`` and never resolves again, so DNS rebinding between the check and the
connection cannot redirect the request. IP literals in any spelling the resolver accepts (decimal
``2130706433``, hex ``0x7f000001``, short ``127.1``, octal) are parsed to the address they mean and
classified like any other.

Development only: with ``insecure_loopback`` (the dispatcher's ``WEBHOOK_ALLOW_INSECURE_LOOPBACK``,
which its settings refuse outside ``DPS_ENVIRONMENT=development``) an ``http://`` URL is allowed when
EVERY address its host resolves to is a loopback address, so ``make run`` can deliver to a receiver on
the same machine without a certificate. Nothing else is relaxed: https URLs are judged as always, and
plain HTTP to any other address is refused.

A lookup is bounded in time (``resolve_within``): it runs on a small pool of resolver threads and the
caller stops waiting when the time is up (``getaddrinfo`` itself cannot be interrupted; its thread
finishes on its own), so a stalled DNS server cannot hold a delivery attempt past its deadline.
"""

from __future__ import annotations

import ipaddress
import queue
import socket
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar
from urllib.parse import urlsplit

from dps_webhooks.domain.addresses import IPAddress, IPNetwork, is_allowed, refusal

DEFAULT_PORT = 443
DEFAULT_PORTS = {"https": 443, "http": 80}
RESOLVE_WITHIN_SECONDS = 5.0  # at registration; an attempt passes what is left of its own deadline
RESOLVER_THREADS = 8  # lookups at once; more wait their turn (and time out if the DNS has stalled)

_T = TypeVar("_T")


class UrlRefused(ValueError):
    """The URL may not receive webhooks; the message says why (safe to show to the caller)."""


class ResolutionTimedOut(UrlRefused):
    """The host's addresses did not come back in time."""


@dataclass(frozen=True)
class Target:
    host: str  # as written in the URL, lowercased, without brackets: the TLS name and Host header
    port: int
    path_and_query: str
    address: str  # the vetted IP to connect to
    scheme: str = "https"  # "http" only for a loopback receiver allowed by ``insecure_loopback``

    @property
    def authority(self) -> str:
        """The Host header value."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


def vet_url(
    url: str,
    allowed_networks: Iterable[IPNetwork] = (),
    *,
    resolve_within: float = RESOLVE_WITHIN_SECONDS,
    insecure_loopback: bool = False,
) -> Target:
    """The URL's target with the address to connect to; ``UrlRefused`` when it is not allowed,
    ``ResolutionTimedOut`` (a ``UrlRefused``) when its host did not resolve within ``resolve_within``.
    ``insecure_loopback``: ``http://`` is allowed too, to loopback addresses only (development)."""
    scheme, host, port, path_and_query = _parse(url, insecure_loopback)
    addresses = _resolve(host, port, resolve_within)
    networks = tuple(allowed_networks)
    for address in addresses:
        if scheme == "http":
            if not _is_loopback(address):
                raise UrlRefused(f"must use https (plain http is allowed to loopback addresses only, not {address})")
        elif not is_allowed(address, networks):
            raise UrlRefused(f"host resolves to {refusal(address)} ({address})")
    chosen = addresses[0]
    if isinstance(chosen, ipaddress.IPv6Address) and chosen.ipv4_mapped is not None:
        chosen = chosen.ipv4_mapped  # the same host, reached over IPv4
    return Target(host, port, path_and_query, str(chosen), scheme)


def _is_loopback(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


@lru_cache(maxsize=4096)  # pure; every attempt to an endpoint parses the same URL (refusals raise: not cached)
def _parse(url: str, insecure_loopback: bool = False) -> tuple[str, str, int, str]:
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise UrlRefused("must not contain whitespace or control characters")
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        port = DEFAULT_PORTS.get(scheme, DEFAULT_PORT) if parts.port is None else parts.port
    except ValueError as exc:
        raise UrlRefused(f"is not a valid URL: {exc}") from None
    if scheme != "https" and not (scheme == "http" and insecure_loopback):
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
    return scheme, host, port, path_and_query


def _resolve(host: str, port: int, within: float) -> list[IPAddress]:
    literal = _ip_literal(host)
    if literal is not None:
        return [literal]
    lookup = _resolver.submit(lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
    try:
        infos = lookup.result(timeout=max(within, 0.0))
    except FutureTimeout:
        raise ResolutionTimedOut(f"host did not resolve within {within:g} s") from None
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


class _Resolver:
    """A fixed pool of daemon threads for lookups. Daemon threads, unlike a ThreadPoolExecutor's, do
    not hold up the process's exit behind a lookup that hangs."""

    def __init__(self, threads: int):
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._threads = threads
        self._started = False
        self._lock = threading.Lock()

    def submit(self, lookup: Callable[[], _T]) -> Future[_T]:
        self._start()
        future: Future[_T] = Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(lookup())
            except BaseException as exc:  # handed to the waiting caller, which decides
                future.set_exception(exc)

        self._jobs.put(job)
        return future

    def _start(self) -> None:
        with self._lock:
            if not self._started:
                for number in range(self._threads):
                    threading.Thread(target=self._work, name=f"webhook-dns-{number}", daemon=True).start()
                self._started = True

    def _work(self) -> None:
        while True:
            self._jobs.get()()


_resolver = _Resolver(RESOLVER_THREADS)
