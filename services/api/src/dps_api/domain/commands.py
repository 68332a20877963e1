"""The "not sent" marker of partial-update commands, shared by the commands the use cases take and
the request models that build them.

A field of an update command holding ``NOT_SENT`` leaves the stored value as it is; ``None`` is a
value (it clears a nullable field). Resources turn a request body's missing fields into it.
"""

from __future__ import annotations

from dataclasses import fields
from enum import Enum
from typing import Any, Final, TypeAlias, TypeVar

T = TypeVar("T")


class NotSent(Enum):
    NOT_SENT = "NOT_SENT"

    def __repr__(self) -> str:
        return "NOT_SENT"


NOT_SENT: Final = NotSent.NOT_SENT

# ``Patch[str]``: a new value, or NOT_SENT
Patch: TypeAlias = T | NotSent


def sent(command: Any) -> dict[str, Any]:
    """The fields of a dataclass command that were sent, by name."""
    values = ((field.name, getattr(command, field.name)) for field in fields(command))
    return {name: value for name, value in values if value is not NOT_SENT}
