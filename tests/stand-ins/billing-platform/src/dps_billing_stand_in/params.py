"""Reading one endpoint's parameters as strictly as Stripe: required, types, lengths, enums, metadata."""

from __future__ import annotations

import re
from collections.abc import Collection

from .errors import ApiError, invalid
from .forms import FormTree, FormValue

METADATA_MAX_KEYS = 50
METADATA_KEY_MAX = 40
METADATA_VALUE_MAX = 500
_INTEGER = re.compile(r"-?[0-9]+")
_INT64_MAX = 2**63 - 1


def _shown(value: FormValue) -> str:
    return value if isinstance(value, str) else repr(value)


def missing(name: str) -> ApiError:
    return ApiError(400, f"Missing required param: {name}.", code="parameter_missing", param=name)


class Params:
    """A hash of parameters; `prefix` names nested ones as Stripe does (`recurring[interval]`)."""

    def __init__(self, data: FormTree, prefix: str = "") -> None:
        self._data = data
        self._prefix = prefix

    def name(self, key: str) -> str:
        return f"{self._prefix}[{key}]" if self._prefix else key

    def reject_unknown(self, allowed: Collection[str]) -> None:
        for key in self._data:
            if key not in allowed:
                name = self.name(key)
                raise ApiError(400, f"Received unknown parameter: {name}", code="parameter_unknown", param=name)

    def sent(self, key: str) -> bool:
        return key in self._data

    def string(self, key: str, *, required: bool = False, max_length: int | None = None) -> str | None:
        """A string; an empty one means "not set", as in Stripe, and is refused where required."""
        name = self.name(key)
        value = self._data.get(key)
        if value is None:
            if required:
                raise missing(name)
            return None
        if not isinstance(value, str):
            raise invalid(f"Invalid string: {_shown(value)}", param=name)
        if value == "":
            if required:
                raise ApiError(
                    400,
                    f"You passed an empty string for '{name}'. We assume empty values are an attempt to unset a "
                    f"parameter; however '{name}' cannot be unset. You should remove '{name}' from your request "
                    "or supply a non-empty value.",
                    code="parameter_invalid_empty",
                    param=name,
                )
            return None
        if max_length is not None and len(value) > max_length:
            raise invalid(f"Invalid string: {value[:40]}...; must be at most {max_length} characters", param=name)
        return value

    def integer(
        self, key: str, *, required: bool = False, minimum: int | None = None, maximum: int | None = None
    ) -> int | None:
        text = self.string(key, required=required)
        if text is None:
            return None
        name = self.name(key)
        if _INTEGER.fullmatch(text) is None or abs(int(text)) > _INT64_MAX:
            raise ApiError(400, f"Invalid integer: {text}", code="parameter_invalid_integer", param=name)
        number = int(text)
        if minimum is not None and number < minimum:
            raise invalid(f"This value must be greater than or equal to {minimum}.", param=name)
        if maximum is not None and number > maximum:
            raise invalid(f"This value must be less than or equal to {maximum}.", param=name)
        return number

    def boolean(self, key: str) -> bool | None:
        text = self.string(key)
        if text is None:
            return None
        if text not in ("true", "false"):
            raise invalid(f"Invalid boolean: {text}", param=self.name(key))
        return text == "true"

    def choice(self, key: str, choices: Collection[str], *, required: bool = False) -> str | None:
        text = self.string(key, required=required)
        if text is None:
            return None
        if text not in choices:
            listed = sorted(choices)
            spoken = ", ".join(listed[:-1]) + f", or {listed[-1]}" if len(listed) > 1 else listed[0]
            raise invalid(f"Invalid {key}: must be one of {spoken}", param=self.name(key))
        return text

    def strings(self, key: str) -> list[str]:
        """An array of strings (`expand[0]=line_items`)."""
        name = self.name(key)
        value = self._data.get(key)
        if value is None or value == "":
            return []
        if not isinstance(value, dict) or sorted(value) != sorted(str(i) for i in range(len(value))):
            raise invalid("Invalid array", param=name)
        result = []
        for index in range(len(value)):
            item = value[str(index)]
            if not isinstance(item, str):
                raise invalid(f"Invalid string: {_shown(item)}", param=f"{name}[{index}]")
            result.append(item)
        return result

    def child(self, key: str, *, required: bool = False) -> Params | None:
        name = self.name(key)
        value = self._data.get(key)
        if value is None or value == "":
            if required:
                raise missing(name)
            return None
        if not isinstance(value, dict):
            raise invalid("Invalid object", param=name)
        return Params(value, name)

    def array(self, key: str) -> list[Params] | None:
        """An array of hashes (`line_items[0][price]`), indexes 0..n-1."""
        name = self.name(key)
        value = self._data.get(key)
        if value is None or value == "":
            return None
        if not isinstance(value, dict):
            raise invalid("Invalid array", param=name)
        keys = sorted(value, key=lambda k: int(k) if k.isdigit() else -1)
        if keys != [str(index) for index in range(len(keys))]:
            raise invalid("Invalid array: indexes must run 0, 1, 2, ... without gaps", param=name)
        items = []
        for index in keys:
            item = value[index]
            if not isinstance(item, dict):
                raise invalid("Invalid object", param=f"{name}[{index}]")
            items.append(Params(item, f"{name}[{index}]"))
        return items

    def metadata(self, key: str = "metadata") -> dict[str, str]:
        """Metadata: at most 50 keys of at most 40 characters, values of at most 500; an empty value unsets."""
        node = self.child(key)
        if node is None:
            return {}
        result: dict[str, str] = {}
        for meta_key, value in node._data.items():
            name = node.name(meta_key)
            if not isinstance(value, str):
                raise invalid(f"Invalid string: {_shown(value)}", param=name)
            if len(meta_key) > METADATA_KEY_MAX:
                raise invalid(
                    f"Metadata keys can have up to {METADATA_KEY_MAX} characters, but you passed in a key that is "
                    f"{len(meta_key)} characters.",
                    param=name,
                )
            if len(value) > METADATA_VALUE_MAX:
                raise invalid(
                    f"Metadata values can have up to {METADATA_VALUE_MAX} characters, but you passed in a value "
                    f"that is {len(value)} characters.",
                    param=name,
                )
            if value != "":
                result[meta_key] = value
        if len(node._data) > METADATA_MAX_KEYS:
            raise invalid(
                f"Metadata can have up to {METADATA_MAX_KEYS} keys, but you passed in {len(node._data)} keys.",
                param=self.name(key),
            )
        return result

    def future_timestamp(self, key: str, now: float) -> int | None:
        stamp = self.integer(key)
        if stamp is not None and stamp <= now:
            raise invalid(
                f"{self.name(key)} must be in the future (a Unix timestamp after {int(now)}), got {stamp}.",
                param=self.name(key),
            )
        return stamp
