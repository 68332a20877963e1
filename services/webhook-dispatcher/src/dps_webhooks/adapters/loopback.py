"""Development only: attempts to plain ``http://`` receivers on loopback, for
``WEBHOOK_ALLOW_INSECURE_LOOPBACK=true`` (which the settings refuse outside ``DPS_ENVIRONMENT=development``).

Such an attempt is made as an HTTPS one is (the URL vetted again, the connection to the vetted address,
one deadline for the whole attempt, a bounded read, redirects never followed), without TLS. URLs that
are not ``http://`` go to ``Sender`` unchanged, so HTTPS receivers are judged exactly as in production.
"""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Mapping
from urllib.parse import urlsplit

from dps_webhooks.adapters import watchdog
from dps_webhooks.adapters.sender import Sender, _PinnedConnection
from dps_webhooks.adapters.url_guard import ResolutionTimedOut, UrlRefused, vet_url
from dps_webhooks.domain.attempt_outcome import AttemptResult


class _PlainConnection(_PinnedConnection):
    """HTTP to the vetted loopback address: the same connection, never wrapped in TLS."""

    def connect(self) -> None:
        assert self.cutoff is not None
        sock = socket.create_connection((self.host, self.port), self.cutoff.remaining() or 0.001)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.cutoff.attach(sock)
        self.sock = sock


class LoopbackSender(Sender):
    """A ``Sender`` that also delivers to ``http://`` receivers on loopback addresses."""

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> AttemptResult:
        if _scheme(url) != "http":
            return super().send(url, body, headers)
        started = time.monotonic()
        status, excerpt, error = self._plain_attempt(url, body, headers)
        return AttemptResult(status, excerpt, error, round((time.monotonic() - started) * 1000))

    def _plain_attempt(self, url: str, body: bytes, headers: Mapping[str, str]) -> tuple[int | None, str | None, str | None]:
        cutoff = watchdog.arm(self.timeout_seconds)
        try:
            try:
                target = vet_url(url, resolve_within=cutoff.remaining(), insecure_loopback=True)
            except ResolutionTimedOut:
                return None, None, f"Timed out after {self.timeout_seconds:g} s resolving the host."
            except UrlRefused as exc:
                return None, None, f"The URL was refused: {exc}."
            # a new connection each time (never kept, so never mistaken for an HTTPS one to the same port)
            return self._exchange(_PlainConnection(target, self._context), target, body, headers, cutoff)
        except (OSError, http.client.HTTPException) as exc:
            return None, None, self._describe(exc, cutoff)
        finally:
            cutoff.release()

    def _keep(self, connection: _PinnedConnection) -> None:
        if isinstance(connection, _PlainConnection):
            connection.close()
        else:
            super()._keep(connection)


def _scheme(url: str) -> str:
    try:
        return urlsplit(url).scheme.lower()
    except ValueError:
        return ""
