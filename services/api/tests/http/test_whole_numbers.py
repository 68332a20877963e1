"""Integer fields take a whole number however JSON writes it: JSON has one number type, and JSON
Schema's ``integer`` (the document's type for these fields) is any number whose fraction is zero,
so ``12.0`` and ``1.2e1`` are 12, as a client's JSON library may write them. A fraction (``12.5``)
stays a 400 ``validation_error`` naming the field, and so do a string or a boolean (types are
strict). Every integer field of every request body is here, for create and update."""

from __future__ import annotations

import json

import pytest

from dps_common.http.bodies import whole_numbers_as_integers

from quote_helpers import API, QUOTES, error_fields, product, quote_body, simple_quote

# 12 and 1 (an approval group needs no more approvals than members), each written four ways
WHOLE = [("12.0", "1.0"), ("1.2e1", "1e0"), ("12E0", "1E0"), ("120e-1", "10e-1")]
REFUSED = ["12.5", "1.25e1", '"12"', "true"]
GROUPS, RULE_GROUPS = f"{API}/approval-groups", f"{API}/approval-rule-groups"


def raw(body: dict, field: str, number: str) -> bytes:
    """``body`` as JSON with ``field`` written exactly as ``number`` (json.dumps writes 12.0 for 1.2e1)."""
    text = json.dumps({**body, field: "__NUMBER__"})
    return text.replace('"__NUMBER__"', number).encode()


def send(client, method: str, path: str, member, body: bytes):
    headers = {**member.headers, "Content-Type": "application/json"}
    return client.simulate_request(method, path, body=body, headers=headers)


def creates(client, org) -> list[tuple[str, dict, str, bool]]:
    """(path, a valid body, its integer field, whether it takes 12 rather than 1) of each create with
    an integer field."""
    item = product(client, org)
    group = {"name": "Deal desk", "memberUserIds": [str(org.admin.user_id)], "requiredApprovals": 1}
    return [
        (QUOTES, quote_body({"productId": item["id"], "quantity": "1"}), "subscriptionTermMonths", True),
        (GROUPS, group, "requiredApprovals", False),
        (RULE_GROUPS, {"name": "Managers", "position": 5}, "position", True),
    ]


@pytest.mark.parametrize(("twelve", "one"), WHOLE)
def test_a_create_takes_a_whole_number_written_with_a_fraction_or_an_exponent(client, org, twelve, one):
    for path, body, field, takes_twelve in creates(client, org):
        body = {**body, "name": f"{body['name']} {twelve}"}
        resp = send(client, "POST", path, org.admin, raw(body, field, twelve if takes_twelve else one))
        assert resp.status_code == 201, (path, twelve, resp.json)
        got = client.simulate_get(f"{path}/{resp.json['id']}", headers=org.admin.headers).json
        assert got[field] == (12 if takes_twelve else 1) and isinstance(got[field], int), (path, got)


@pytest.mark.parametrize("number", REFUSED)
def test_a_create_refuses_a_fraction_a_string_or_a_boolean_naming_the_field(client, org, number):
    for path, body, field, _ in creates(client, org):
        resp = send(client, "POST", path, org.admin, raw(body, field, number))
        assert resp.status_code == 400 and resp.json["code"] == "validation_error", (path, number, resp.json)
        assert error_fields(resp) == [field], (path, number)


@pytest.mark.parametrize(("twelve", "one"), WHOLE)
def test_an_update_takes_a_whole_number_too(client, org, twelve, one):
    quote = simple_quote(client, org)
    resp = send(client, "PATCH", f"{QUOTES}/{quote['id']}", org.user, raw({}, "subscriptionTermMonths", twelve))
    assert resp.status_code == 200 and resp.json["subscriptionTermMonths"] == 12, resp.json
    group = send(client, "POST", GROUPS, org.admin, raw(
        {"name": f"Desk {twelve}", "memberUserIds": [str(org.admin.user_id)]}, "requiredApprovals", "1")).json
    resp = send(client, "PATCH", f"{GROUPS}/{group['id']}", org.admin, raw({}, "requiredApprovals", one))
    assert resp.status_code == 200 and resp.json["requiredApprovals"] == 1, resp.json
    rule_group = send(client, "POST", RULE_GROUPS, org.admin, raw({"name": f"Rank {twelve}"}, "position", "1")).json
    resp = send(client, "PATCH", f"{RULE_GROUPS}/{rule_group['id']}", org.admin, raw({}, "position", twelve))
    assert resp.status_code == 200 and resp.json["position"] == 12, resp.json


def test_an_update_refuses_a_fraction_and_changes_nothing(client, org):
    quote = simple_quote(client, org)
    resp = send(client, "PATCH", f"{QUOTES}/{quote['id']}", org.user, raw({}, "subscriptionTermMonths", "12.5"))
    assert resp.status_code == 400 and error_fields(resp) == ["subscriptionTermMonths"], resp.json
    after = client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.user.headers).json
    assert after["subscriptionTermMonths"] == quote["subscriptionTermMonths"]


def test_a_whole_number_out_of_range_is_refused_as_out_of_range(client, org):
    quote = simple_quote(client, org)
    resp = send(client, "PATCH", f"{QUOTES}/{quote['id']}", org.user, raw({}, "subscriptionTermMonths", "1.21e2"))
    assert resp.status_code == 400 and error_fields(resp) == ["subscriptionTermMonths"], resp.json
    assert "120" in resp.json["detail"]  # the bound, as for 121


def test_only_the_refused_numbers_are_rewritten():
    """Whole numbers elsewhere (a fraction, a number in a string) are left as they were sent."""
    errors = [{"type": "int_type", "loc": ("lines", 1, "term", "int"), "input": 12.0},
              {"type": "int_type", "loc": ("size",), "input": 2.5}]
    body = b'{"lines": [{"term": 3}, {"term": 12.0, "price": 12.0}], "size": 2.5, "note": "12.0"}'
    rewritten = json.loads(whole_numbers_as_integers(body, errors) or b"")
    assert rewritten == {"lines": [{"term": 3}, {"term": 12, "price": 12.0}], "size": 2.5, "note": "12.0"}
    assert isinstance(rewritten["lines"][1]["term"], int) and isinstance(rewritten["lines"][1]["price"], float)
    assert whole_numbers_as_integers(body, errors[1:]) is None


def test_the_reference_says_how_numbers_are_written(client):
    introduction = client.simulate_get(f"{API}/openapi.json").json["info"]["description"]
    assert "`12.0`, `1.2e1`" in introduction and "`12.5`" in introduction
