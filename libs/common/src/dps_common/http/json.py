"""JSON encoding for responses: orjson, with Decimal, UUID and datetimes handled explicitly."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import falcon
import orjson


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_default)


def loads(raw: bytes) -> Any:
    return orjson.loads(raw)


class JsonHandler(falcon.media.BaseHandler):
    """Response media handler; request bodies are read through ``dps_common.http.bodies``."""

    def serialize(self, media, content_type=None):
        return dumps(media)

    def deserialize(self, stream, content_type, content_length):
        return loads(stream.read())
