"""One pass over a text for many secrets at once: a regular expression of every secret as an
alternative (longest first), so a scan of thousands of rows or log lines for hundreds of secrets
reads each value once instead of once per secret."""

from __future__ import annotations

import re
from collections.abc import Mapping

MIN_LENGTH = 8  # shorter values would match by chance


class SecretMatcher:
    """Finds which of ``secrets`` (label -> the secret as shown) occur in a text or in bytes; the
    labels are returned, never the secrets."""

    def __init__(self, secrets: Mapping[str, str]):
        short = [label for label, secret in secrets.items() if len(secret) < MIN_LENGTH]
        if short:
            raise ValueError(f"secrets too short to search for: {short}")
        self._labels: dict[str, list[str]] = {}
        for label, secret in secrets.items():
            self._labels.setdefault(secret, []).append(label)
        alternatives = sorted(self._labels, key=len, reverse=True)
        self._text = re.compile("|".join(map(re.escape, alternatives))) if alternatives else None
        self._bytes = re.compile(b"|".join(re.escape(s.encode()) for s in alternatives)) if alternatives else None

    def __len__(self) -> int:
        return sum(len(labels) for labels in self._labels.values())

    def in_text(self, value: str) -> list[str]:
        if self._text is None:
            return []
        return self._found({match.group() for match in self._text.finditer(value)})

    def in_bytes(self, value: bytes) -> list[str]:
        if self._bytes is None:
            return []
        return self._found({match.group().decode() for match in self._bytes.finditer(value)})

    def _found(self, secrets: set[str]) -> list[str]:
        """Every label of each secret found, and of any secret inside a found one (a whole API key
        holds its secret part: both were shown, both are found)."""
        found = {label for secret in secrets for label in self._labels[secret]}
        for secret in secrets:
            for other, labels in self._labels.items():
                if other != secret and other in secret:
                    found.update(labels)
        return sorted(found)
