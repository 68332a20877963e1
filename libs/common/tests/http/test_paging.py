"""Signed keyset cursors and limit parsing."""

import uuid

import falcon
import falcon.testing
import pytest

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.http.operations import Paging
from dps_common.http.paging import cursor_scope, parse_limit
from dps_common.paging import CursorCodec, InvalidCursor, InvalidLimit

PAGING = Paging(default=100, maximum=500, items_property="things")


def request(query: str = "", path: str = "/external/v1/things") -> falcon.Request:
    return falcon.Request(falcon.testing.create_environ(path=path, query_string=query))


def test_cursor_round_trips_within_its_scope():
    codec = CursorCodec(b"s" * 32)
    cursor = codec.encode("/things?", ["2026-01-01T00:00:00Z", "0191-id"])
    assert codec.decode("/things?", cursor) == ["2026-01-01T00:00:00Z", "0191-id"]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda c: c[:-1] + ("A" if c[-1] != "A" else "B"),  # tampered MAC
        lambda c: "W10" + c[3:],  # tampered body
        lambda c: c.split(".")[0],  # MAC stripped
        lambda c: "not-a-cursor",
        lambda c: "",
    ],
)
def test_tampered_or_forged_cursors_are_refused(mutate):
    codec = CursorCodec(b"s" * 32)
    cursor = codec.encode("/things?", ["abc"])
    with pytest.raises(InvalidCursor):
        codec.decode("/things?", mutate(cursor))


def test_a_cursor_from_another_endpoint_filter_or_secret_is_refused():
    codec = CursorCodec(b"s" * 32)
    cursor = codec.encode("/things?status=OPEN", ["abc"])
    with pytest.raises(InvalidCursor):
        codec.decode("/other?status=OPEN", cursor)
    with pytest.raises(InvalidCursor):
        codec.decode("/things?status=CLOSED", cursor)
    with pytest.raises(InvalidCursor):
        CursorCodec(b"t" * 32).decode("/things?status=OPEN", cursor)


def test_cursor_scope_binds_the_callers_organization():
    def asked_by(organization_id: uuid.UUID) -> falcon.Request:
        req = request("limit=1")
        req.context.principal = Principal(organization_id, "Org", uuid.uuid4(), Role.ADMIN, "key")
        return req

    first, second = uuid.uuid4(), uuid.uuid4()
    assert cursor_scope(asked_by(first), {"a": 1}) == cursor_scope(asked_by(first), {"a": 1})
    assert cursor_scope(asked_by(first), {"a": 1}) != cursor_scope(asked_by(second), {"a": 1})
    codec = CursorCodec(b"s" * 32)
    cursor = codec.encode(cursor_scope(asked_by(first)), ["abc"])
    with pytest.raises(InvalidCursor):
        codec.decode(cursor_scope(asked_by(second)), cursor)


def test_cursor_scope_orders_filters_and_ignores_absent_ones():
    req = request()
    assert cursor_scope(req, {"b": 2, "a": 1, "c": None}) == cursor_scope(req, {"a": 1, "b": 2})


@pytest.mark.parametrize("raw", ["0", "501", "-1", "abc", "1.5", "", "²", "٥", "+5", " 5"])
def test_limit_outside_the_range_is_refused_not_clamped(raw):
    with pytest.raises(InvalidLimit):
        parse_limit(request(f"limit={raw}"), PAGING)


def test_limit_defaults_and_accepts_the_maximum():
    assert parse_limit(request(), PAGING) == 100
    assert parse_limit(request("limit=500"), PAGING) == 500
    assert parse_limit(request("limit=1"), PAGING) == 1
