"""``/external/v1/docs``: the API reference page, Swagger UI over the external API's one document.

The assets come from the ``swagger-ui-py`` package, served by the api itself: no CDN, so the page
works wherever the service does, offline too, under a content security policy that allows nothing
from elsewhere. Like the document, the page needs no API key."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import falcon
from jinja2 import Environment, PackageLoader, select_autoescape

from dps_common.http.app import API_PREFIX, ServiceApp

PAGE = API_PREFIX + "/docs"
# Swagger UI sets inline styles; its scripts are files (no inline script, no eval needed).
_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
_ASSETS = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "favicon-32x32.png": "image/png",
}
# the page and its start script (an HTML page autoescaped, the document's address as a JSON string)
_TEMPLATES = Environment(loader=PackageLoader("dps_api", "resources/templates"), autoescape=select_autoescape(["html"]))


def add_reference_page(app: ServiceApp) -> None:
    page = _TEMPLATES.get_template("reference.html").render(page=PAGE)
    start = _TEMPLATES.get_template("reference_start.js").render(document=API_PREFIX + "/openapi.json")
    app.add_route(PAGE, _Text(page, falcon.MEDIA_HTML))
    app.add_route(PAGE + "/start.js", _Text(start, "text/javascript; charset=utf-8"))
    app.add_route(PAGE + "/assets/{name}", _Asset())


def _secure(resp: falcon.Response) -> None:
    resp.set_header("Content-Security-Policy", _POLICY)
    resp.set_header("X-Content-Type-Options", "nosniff")


class _Text:
    public = True

    def __init__(self, text: str, content_type: str):
        self._data, self._type = text.encode(), content_type

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _secure(resp)
        resp.content_type = self._type
        resp.data = self._data


class _Asset:
    """Only the files the page uses, read once per process (the bundle is 1.5 MB)."""

    public = True

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        if name not in _ASSETS:
            raise falcon.HTTPNotFound()
        _secure(resp)
        resp.content_type = _ASSETS[name]
        resp.cache_control = ["public", "max-age=86400"]
        resp.data = _read(name)


@cache
def _read(name: str) -> bytes:
    return (_static_dir() / name).read_bytes()


def _static_dir() -> Path:
    """The package's asset folder, found without importing it (its handlers pull in template engines)."""
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("swagger-ui-py is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "static"
