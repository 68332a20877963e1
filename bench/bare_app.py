"""The baseline: a bare Falcon app answering ``{"ok": true}`` (no middleware, no database).

Served by bench/run.py under the same gunicorn settings as the api: ``gunicorn bare_app:app``.
"""

import falcon


class Ok:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"ok": True}


app = falcon.App()
app.add_route("/", Ok())
