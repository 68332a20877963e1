"""The customer event catalogue as its publishers document it: from a service's OpenAPI document
(its ``webhooks`` section and the components they use), each event type with its description and
the JSON schema of the payload an endpoint receives, self-contained (components under ``$defs``).

The dispatcher keeps its own copy of this catalogue (it imports no other service's code); the
contract tests compare the copy it serves at ``GET /webhook-event-types`` with what the api and the
connector publish, and ``python tests/contract/contract_events.py`` prints the entries again from
their documents when an event changes (see docs/webhooks.md)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

_COMPONENT = "#/components/schemas/"
_DEF = "#/$defs/"


def _refs(node: Any) -> set[str]:
    return set(re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', json.dumps(node)))


def payload_schema(document: dict[str, Any], event_type: str) -> dict[str, Any]:
    """The envelope schema of ``event_type``, its components inlined under ``$defs``."""
    post = document["webhooks"][event_type]["post"]
    schema = copy.deepcopy(post["requestBody"]["content"]["application/json"]["schema"])
    components = document["components"]["schemas"]
    needed: set[str] = set()
    todo = _refs(schema)
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            todo |= _refs(components[name])
    text = json.dumps({**schema, "$defs": {name: components[name] for name in sorted(needed)}})
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            **json.loads(text.replace(f'"{_COMPONENT}', f'"{_DEF}'))}


def published(document: dict[str, Any], prefixes: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """``{type: {"description", "schema"}}`` of the document's event types (those starting with one
    of ``prefixes``, when given)."""
    return {
        name: {"description": item["post"]["summary"], "schema": payload_schema(document, name)}
        for name, item in sorted(document.get("webhooks", {}).items())
        if not prefixes or name.startswith(prefixes)
    }


if __name__ == "__main__":  # the api's and the connector's documents (files or URLs) -> the entries
    import sys
    from urllib.request import urlopen

    entries: dict[str, dict[str, Any]] = {}
    for source in sys.argv[1:]:
        raw = urlopen(source).read() if "://" in source else open(source, "rb").read()  # noqa: S310, SIM115
        entries |= published(json.loads(raw))
    json.dump(entries, sys.stdout, indent=1, sort_keys=True)
