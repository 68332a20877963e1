"""A request field the service dropped (the spec: unknown fields never produce an error, they are
silently dropped) is named in the ``Ignored-Fields`` response header, so a misspelt discount that
made a quote at list price leaves a trace; the OpenAPI document says so on operations with a body."""

from __future__ import annotations

from quote_helpers import QUOTES, product, quote_body


def test_a_misspelt_discount_is_named_in_ignored_fields_and_the_quote_is_at_list_price(client, org):
    item = product(client, org, prices={"USD": "100.00"})
    body = quote_body({"productId": item["id"], "quantity": "1", "discountPercnt": "30"}, discountPercnt="30")
    resp = client.simulate_post(QUOTES, json=body, headers=org.user.headers)
    assert resp.status_code == 201, resp.json
    assert resp.headers["ignored-fields"] == "lines[0].discountPercnt, discountPercnt"
    assert resp.json["lines"][0]["discountPercent"] in (None, "0", "0.0000")


def test_a_body_with_only_known_fields_has_no_ignored_fields_header(client, org):
    item = product(client, org)
    resp = client.simulate_post(QUOTES, json=quote_body({"productId": item["id"], "quantity": "1"}), headers=org.user.headers)
    assert resp.status_code == 201 and "ignored-fields" not in resp.headers


def test_the_document_names_the_header_on_the_success_answer_of_every_operation_with_a_body(client):
    doc = client.simulate_get("/external/v1/openapi.json").json
    with_body = [(path, method, op) for path, item in doc["paths"].items() for method, op in item.items()
                 if "requestBody" in op]
    assert with_body
    for path, method, op in with_body:
        [success] = [answer for code, answer in op["responses"].items() if code.startswith("2")]
        assert "Ignored-Fields" in success.get("headers", {}), (method, path)
    without = [op for item in doc["paths"].values() for op in item.values() if "requestBody" not in op]
    assert all("Ignored-Fields" not in answer.get("headers", {}) for op in without for answer in op["responses"].values())
