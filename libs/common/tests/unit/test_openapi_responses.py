"""The shared OpenAPI generation documents what the server really answers: besides each operation's
own answers, the server's (a slow request 408, a body over 10 MB 413 on every operation, a request
line too long 414, headers too large 431), all as problem+json."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dps_common.auth.scopes import Scope
from dps_common.http.operations import Operation
from dps_common.openapi.document import build_document


class Thing(BaseModel):
    name: str


class Things:
    operations = {
        "GET": Operation(summary="List things.", scope=None, response=Thing),
        "POST": Operation(summary="Make a thing.", scope=Scope.QUOTES_WRITE, body=Thing, response=Thing, status=201),
    }


class Approval:
    operations = {"POST": Operation(summary="Approve (no body).", scope=Scope.QUOTES_WRITE, status=201)}


def document() -> dict[str, Any]:
    return build_document("Test", "1", "/external/v1", [("/things", Things()), ("/things/{id}/approval", Approval())])


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in document()["paths"].items() for method, op in item.items()]


def test_every_operation_documents_the_servers_own_answers_as_problem_details():
    for path, method, op in operations():
        for status in ("400", "408", "413", "414", "431"):
            response = op["responses"].get(status)
            assert response is not None, (method, path, status)
            assert list(response["content"]) == ["application/problem+json"], (method, path, status)


def test_a_body_over_10_mb_is_413_on_operations_that_take_no_body_too():
    approval = document()["paths"]["/things/{id}/approval"]["post"]
    assert "413" in approval["responses"] and "requestBody" not in approval
    assert "415" not in approval["responses"]  # no body is parsed: its media type is never checked


def test_answers_the_server_writes_without_the_app_carry_no_budget_fields():
    for _, _, op in operations():
        for status in ("414", "431"):
            assert "headers" not in op["responses"][status]
            assert "4094" in op["responses"]["414"]["description"] and "8190" in op["responses"]["431"]["description"]
        assert "RateLimit" in op["responses"]["413"]["headers"]


class Public:
    public = True
    operations = {"GET": Operation(summary="A browser's redirect.", scope=None)}


def published(authenticator: Any) -> dict[str, Any]:
    import falcon.testing

    from dps_common.http.app import Api

    api = Api("test", authenticator, {})
    api.add("/things", Things())
    api.add("/redirect", Public())
    api.publish_openapi("Test", "1")
    return falcon.testing.TestClient(api.app).simulate_get("/external/v1/openapi.json").json


def test_a_service_that_asks_the_api_to_check_keys_documents_503_on_every_keyed_operation():
    from dps_common.auth.cache import TtlCache
    from dps_common.auth.introspection import IntrospectingAuthenticator

    # nothing is asked at construction: the api's address is never reached here
    document = published(IntrospectingAuthenticator("https://api.invalid", "token", TtlCache(60)))
    for method, op in document["paths"]["/things"].items():
        unavailable = op["responses"].get("503")
        assert unavailable is not None and "key_check_unavailable" in unavailable["description"], method
        assert list(unavailable["content"]) == ["application/problem+json"]
    assert "503" not in document["paths"]["/redirect"]["get"]["responses"]  # public: no key is checked


def test_a_service_that_checks_keys_itself_documents_no_503():
    class OwnTables:
        def authenticate(self, raw_key: str | None) -> Any:
            raise AssertionError("not called: the document is built without requests")

    document = published(OwnTables())
    assert all("503" not in op["responses"] for item in document["paths"].values() for op in item.values())
