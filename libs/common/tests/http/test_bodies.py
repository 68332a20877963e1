"""Request bodies: the 10 MB limit with and without Content-Length, field-naming validation errors."""

import io

import falcon
import falcon.testing
import pytest
from pydantic import BaseModel, ConfigDict, Field

from dps_common.errors import PayloadTooLarge, UnsupportedMediaType, ValidationFailed
from dps_common.http import problems
from dps_common.http.bodies import MAX_BODY_BYTES, MAX_IGNORED_NAMED, BodyLimit, parse_body, read_body


class Line(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    quantity: int


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    name: str
    lines: list[Line] = []


class CountingStream(io.RawIOBase):
    """An endless body that counts what the server read."""

    def __init__(self):
        self.read_bytes = 0

    def read(self, size=-1):
        size = 65536 if size is None or size < 0 else size
        self.read_bytes += size
        return b"x" * size


def chunked_request(stream) -> falcon.Request:
    env = falcon.testing.create_environ(method="POST", headers={"Content-Type": "application/json"})
    env.pop("CONTENT_LENGTH", None)
    env["HTTP_TRANSFER_ENCODING"] = "chunked"
    env["wsgi.input"] = stream
    return falcon.Request(env)


def json_request(body: bytes, content_type="application/json") -> falcon.Request:
    return falcon.Request(falcon.testing.create_environ(method="POST", body=body, headers={"Content-Type": content_type}))


def test_chunked_body_over_the_limit_stops_reading_just_past_it():
    stream = CountingStream()
    with pytest.raises(PayloadTooLarge):
        read_body(chunked_request(stream))
    assert MAX_BODY_BYTES < stream.read_bytes <= MAX_BODY_BYTES + 65536


def test_declared_length_over_the_limit_is_refused_before_reading():
    env = falcon.testing.create_environ(method="POST", headers={"Content-Type": "application/json"})
    stream = CountingStream()
    env["CONTENT_LENGTH"] = str(MAX_BODY_BYTES + 1)
    env["wsgi.input"] = stream
    with pytest.raises(PayloadTooLarge):
        read_body(falcon.Request(env))
    assert stream.read_bytes == 0


def test_unknown_fields_are_dropped():
    body = parse_body(json_request(b'{"name": "a", "nmae": "typo", "lines": [{"quantity": 2, "x": 1}]}'), Body)
    assert body.name == "a" and body.lines[0].quantity == 2
    assert not hasattr(body, "nmae")


def test_wrong_types_name_the_field():
    with pytest.raises(ValidationFailed) as err:
        parse_body(json_request(b'{"name": "a", "lines": [{"quantity": "2"}]}'), Body)
    assert err.value.extra["errors"][0]["field"] == "lines[0].quantity"
    assert err.value.detail.startswith("lines[0].quantity:")


def test_missing_field_is_named():
    with pytest.raises(ValidationFailed) as err:
        parse_body(json_request(b"{}"), Body)
    assert err.value.extra["errors"][0]["field"] == "name"


def test_malformed_json_is_a_400():
    with pytest.raises(ValidationFailed) as err:
        parse_body(json_request(b'{"name": '), Body)
    assert err.value.code == "malformed_json"


def test_body_without_json_content_type_is_refused():
    with pytest.raises(UnsupportedMediaType):
        parse_body(json_request(b'{"name": "a"}', content_type="text/plain"), Body)


def test_nul_characters_are_refused_naming_the_field():
    with pytest.raises(ValidationFailed) as err:
        parse_body(json_request(b'{"name": "a", "lines": [{"quantity": 1, "note": "x\\u0000y"}]}'), Body)
    assert err.value.extra["errors"][0]["field"] == "lines[0].note"


class BrokenStream(io.RawIOBase):
    """A chunked body the server could not de-chunk (``dps_common.edge.worker`` raises this)."""

    def read(self, size=-1):
        from dps_common.edge.reading import MalformedBody

        raise MalformedBody("a chunk size is not a hexadecimal number")


def test_a_malformed_chunked_body_is_a_400_that_closes_the_connection():
    app = falcon.App()
    problems.install(app)

    class Echo:
        def on_post(self, req, resp):
            resp.data = read_body(req)

    app.add_route("/echo", Echo())
    result = falcon.testing.simulate_request(
        app, "POST", "/echo", extras={"wsgi.input": BrokenStream()}, headers={"Transfer-Encoding": "chunked"}
    )
    assert result.status_code == 400 and result.json["code"] == "malformed_body"
    assert result.headers["connection"] == "close"


def route_that_takes_no_body(app: falcon.App) -> list[str]:
    done: list[str] = []

    class Approve:
        def on_post(self, req, resp):
            done.append("approved")
            resp.status = 201

    app.add_route("/approve", Approve())
    return done


def test_a_chunked_body_over_the_limit_to_a_route_that_takes_no_body_is_413_before_it_runs():
    app = falcon.App(middleware=[BodyLimit()])
    problems.install(app)
    done = route_that_takes_no_body(app)
    stream = CountingStream()
    result = falcon.testing.simulate_request(
        app, "POST", "/approve", extras={"wsgi.input": stream}, headers={"Transfer-Encoding": "chunked"}
    )
    assert result.status_code == 413 and result.headers["connection"] == "close"
    assert done == [] and stream.read_bytes <= MAX_BODY_BYTES + 65536


def test_a_small_chunked_body_to_a_route_that_takes_no_body_is_read_and_ignored():
    app = falcon.App(middleware=[BodyLimit()])
    problems.install(app)
    done = route_that_takes_no_body(app)
    result = falcon.testing.simulate_request(
        app, "POST", "/approve", extras={"wsgi.input": io.BytesIO(b"{}")}, headers={"Transfer-Encoding": "chunked"}
    )
    assert result.status_code == 201 and done == ["approved"]


class Note(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    text: str = Field(alias="body")


class Order(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    lines: list[Line] = []
    note: Note | None = None
    labels: dict[str, str] = {}


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


def _posted(model, body: bytes) -> falcon.testing.Result:
    app = falcon.App(middleware=[BodyLimit()])
    problems.install(app)

    class Orders:
        def on_post(self, req, resp):
            parse_body(req, model)
            resp.media = {"ok": True}

    app.add_route("/orders", Orders())
    return falcon.testing.simulate_post(app, "/orders", body=body, headers={"Content-Type": "application/json"})


def test_each_dropped_field_is_named_in_the_ignored_fields_header_as_a_json_path():
    result = _posted(Order, b'{"name": "n", "discountPercnt": "30", "lines": [{"quantity": 1},'
                            b' {"quantity": 2, "discountPercnt": "5", "more": {"deep": 1}}],'
                            b' "note": {"body": "b", "txt": "x"}, "labels": {"any": "kept"}}')
    assert result.status_code == 200
    assert result.headers["ignored-fields"] == "discountPercnt, lines[1].discountPercnt, lines[1].more, note.txt"


def test_nothing_dropped_no_header_and_aliases_names_and_allowed_extras_are_not_dropped():
    assert "ignored-fields" not in _posted(Order, b'{"name": "n", "lines": [{"quantity": 1}]}').headers
    assert "ignored-fields" not in _posted(Order, b'{"name": "n", "note": {"text": "by name"}}').headers
    assert "ignored-fields" not in _posted(Open, b'{"name": "n", "kept": 1}').headers


def test_an_odd_key_is_quoted_ascii_without_commas_and_the_list_is_bounded():
    assert _posted(Order, '{"name": "n", "a,b\\u00e9\\n": 1}'.encode()).headers["ignored-fields"] == (
        '["a\\u002cb\\u00e9\\n"]'
    )
    many = _posted(Order, ("{" + ", ".join(f'"x{i}": 1' for i in range(80)) + ', "name": "n"}').encode())
    assert many.headers["ignored-fields"].split(", ") == [f"x{i}" for i in range(MAX_IGNORED_NAMED)]


def test_a_refused_body_has_no_ignored_fields_header():
    result = _posted(Order, b'{"name": 1, "typo": 2}')
    assert result.status_code == 400 and "ignored-fields" not in result.headers
