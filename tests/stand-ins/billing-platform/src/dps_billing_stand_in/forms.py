"""Strict parsing of Stripe's form encoding with brackets (`metadata[k]=v`, `line_items[0][price]=...`).

The parser builds nested dicts with string keys; which of them are arrays is decided by each endpoint's
parameters (a metadata key may well be "0"). Stricter than Stripe where a client could only be wrong:
a repeated name, a name both scalar and nested, and `x[]` without an index are refused (the `stripe`
package always sends indexes)."""

from __future__ import annotations

import re
from typing import TypeAlias
from urllib.parse import parse_qsl

from .errors import invalid

FormValue: TypeAlias = "str | dict[str, FormValue] | list[FormValue]"
FormTree: TypeAlias = "dict[str, FormValue]"

_NAME = re.compile(r"([^\[\]]+)((?:\[[^\[\]]*\])*)")
_SEGMENT = re.compile(r"\[([^\[\]]*)\]")
_BRACKETED_METADATA_KEY = re.compile(r"(?:metadata|subscription_data\[metadata\])\[(.*)\]")
_INDEX = re.compile(r"0|[1-9][0-9]*")


def parse_form(body: bytes | str) -> FormTree:
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=True, errors="strict")
    except ValueError as exc:  # UnicodeDecodeError is a ValueError too
        raise invalid(f"Invalid form-encoded body: {exc}") from None
    tree: FormTree = {}
    for name, value in pairs:
        _insert(tree, _split(name), value, name)
    return tree


def _split(name: str) -> list[str]:
    match = _NAME.fullmatch(name)
    if match is None:
        metadata = _BRACKETED_METADATA_KEY.fullmatch(name)
        if metadata is not None:
            raise invalid(
                f"Invalid metadata key: {metadata.group(1)!r}. Metadata keys can't contain '[' or ']'.", param=name
            )
        raise invalid(f"Invalid parameter name: {name!r}", param=name)
    segments = [match.group(1), *_SEGMENT.findall(match.group(2))]
    if "" in segments[1:]:
        raise invalid(f"Invalid parameter name: {name!r}: arrays need explicit indexes, as in {segments[0]}[0]", param=name)
    return segments


def _insert(tree: FormTree, segments: list[str], value: str, name: str) -> None:
    node = tree
    for segment in segments[:-1]:
        child = node.setdefault(segment, {})
        if not isinstance(child, dict):
            raise invalid(f"Invalid parameter: {name} conflicts with a parameter sent as a plain value", param=name)
        node = child
    last = segments[-1]
    if last in node:
        what = "sent twice" if isinstance(node[last], str) else "sent both as a plain value and with sub-keys"
        raise invalid(f"Invalid parameter: {name} {what}", param=name)
    node[last] = value


def with_arrays(tree: FormTree) -> FormTree:
    """The tree as nested dicts and lists, for recordings: a dict keyed 0..n-1 becomes a list, except
    under `metadata`, whose keys are the client's own."""
    return {key: _arrays(value, key == "metadata") for key, value in tree.items()}


def _arrays(value: FormValue, is_metadata: bool) -> FormValue:
    if not isinstance(value, dict) or is_metadata:
        return value
    converted: dict[str, FormValue] = {key: _arrays(child, key == "metadata") for key, child in value.items()}
    if converted and all(_INDEX.fullmatch(key) for key in converted):
        indexes = sorted(int(key) for key in converted)
        if indexes == list(range(len(indexes))):
            return [converted[str(index)] for index in indexes]
    return converted
