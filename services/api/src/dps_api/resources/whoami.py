"""``GET /whoami``: the organization the key belongs to and nothing else."""

import falcon

from dps_common.http.app import Api
from dps_common.http.operations import Operation

from dps_api.resources.context import AppContext
from dps_api.schemas.whoami import Whoami, render_whoami


class WhoamiResource:
    uses_database = False  # the principal is the auth middleware's: served without the database guard
    operations = {
        "GET": Operation(
            summary="The organization the API key belongs to; a connectivity and health check.",
            scope=None,
            response=Whoami,
            tag="Identity",
            operation_id="whoami",
        )
    }

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = render_whoami(req.context.principal)


def register(api: Api, ctx: AppContext) -> None:
    api.add("/whoami", WhoamiResource())
