"""One OpenAPI document for the whole external API, merged from each service's own document.

Each service documents only what it serves (its document is generated from the declarations it
enforces); the ingress routes every path to its one owner, so the parts never overlap. A merge that
finds two owners of a path, or two different schemas under one name, is a programming error and is
refused with what collided, never resolved by picking one."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any


class MergeConflict(ValueError):
    pass


def merge_documents(base: Mapping[str, Any], parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``base`` (its info, servers and security) with the paths, webhooks, tags and components of
    ``parts`` added; nothing of the inputs is changed."""
    merged: dict[str, Any] = copy.deepcopy(dict(base))
    for part in parts:
        title = part.get("info", {}).get("title", "a part")
        _add_disjoint(merged.setdefault("paths", {}), part.get("paths", {}), f"path of {title}")
        if "webhooks" in part:
            _add_disjoint(merged.setdefault("webhooks", {}), part["webhooks"], f"event type of {title}")
        for section, entries in part.get("components", {}).items():
            add_components(merged.setdefault("components", {}).setdefault(section, {}), entries, f"{section} of {title}")
        _add_tags(merged, part.get("tags", []))
    return merged


def _add_disjoint(target: dict[str, Any], entries: Mapping[str, Any], what: str) -> None:
    for name, value in entries.items():
        if name in target:
            raise MergeConflict(f"{what} {name!r} is already documented by another part")
        target[name] = copy.deepcopy(value)


def add_components(target: dict[str, Any], entries: Mapping[str, Any], what: str) -> None:
    """Shared components (the problem schema, the key scheme) appear in every part, identically."""
    for name, value in entries.items():
        if name in target and target[name] != value:
            raise MergeConflict(f"{what} {name!r} differs from the component of that name in another part")
        target.setdefault(name, copy.deepcopy(value))


def _add_tags(merged: dict[str, Any], tags: Sequence[Mapping[str, Any]]) -> None:
    known = {tag["name"] for tag in merged.get("tags", [])}
    for tag in tags:
        if tag["name"] not in known:
            merged.setdefault("tags", []).append(dict(tag))
            known.add(tag["name"])
