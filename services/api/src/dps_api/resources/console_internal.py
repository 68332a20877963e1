"""``/internal/v1/console/*``: what the settings console (``services/console``) asks the api as a
service, before a person has a credential: whether an email may be sent a sign-in link, a console
credential for a person who signed in, and its end at sign-out.

Service-to-service only: the ingress never routes ``/internal``, and the caller must present the
shared ``CONSOLE_API_TOKEN`` as a bearer token (compared in constant time). Without that setting
these routes are not served (404): the console is off."""

from __future__ import annotations

import hmac

import falcon

from dps_common.errors import Unauthorized
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body

from dps_api.resources.context import AppContext
from dps_api.schemas.console_credentials import (
    CredentialRequest,
    SignInCandidateRequest,
    render_credential,
    render_sign_in_candidate,
)
from dps_api.services.console_credentials import ConsoleCredentialService


class ServiceToken:
    """The console's bearer token, compared in constant time."""

    def __init__(self, token: str):
        self._expected = f"Bearer {token}".encode()

    def check(self, req: falcon.Request) -> None:
        presented = (req.get_header("Authorization") or "").encode()
        if not hmac.compare_digest(presented, self._expected):
            raise Unauthorized("A service token is required.", code="invalid_service_token")


class SignInCandidatesResource:
    public = True  # not an x-api-key route: the bearer token authenticates the console

    def __init__(self, service: ConsoleCredentialService, token: ServiceToken):
        self._service = service
        self._token = token

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._token.check(req)
        email = parse_body(req, SignInCandidateRequest).email
        resp.media = render_sign_in_candidate(self._service.is_known(email))


class CredentialsResource:
    public = True

    def __init__(self, service: ConsoleCredentialService, token: ServiceToken):
        self._service = service
        self._token = token

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._token.check(req)
        body = parse_body(req, CredentialRequest)
        resp.media = render_credential(self._service.issue(body.email, body.sessionId))
        resp.status = falcon.HTTP_201
        resp.set_header("Cache-Control", "no-store")


class CredentialResource:
    public = True

    def __init__(self, service: ConsoleCredentialService, token: ServiceToken):
        self._service = service
        self._token = token

    def on_delete(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        self._token.check(req)
        self._service.revoke(key_id)
        resp.status = falcon.HTTP_204


def register(api: Api, ctx: AppContext) -> None:
    if not ctx.settings.console_api_token:
        return
    token = ServiceToken(ctx.settings.console_api_token)
    service = ConsoleCredentialService(ctx.tx, ctx.settings.api_key_pepper, ctx.now, ctx.authenticator.forget)
    api.add_internal("/console/sign-in-candidates", SignInCandidatesResource(service, token))
    api.add_internal("/console/credentials", CredentialsResource(service, token))
    api.add_internal("/console/credentials/{key_id}", CredentialResource(service, token))
