"""The responses' JSON media handler; request bodies are read through ``dps_common.http.bodies``."""

from __future__ import annotations

from typing import Any

import falcon

from dps_common.json import dumps, loads


class JsonHandler(falcon.media.BaseHandler):
    def serialize(self, media: Any, content_type: str | None = None) -> bytes:
        return dumps(media)

    def deserialize(self, stream: Any, content_type: str | None, content_length: int | None) -> Any:
        return loads(stream.read())
