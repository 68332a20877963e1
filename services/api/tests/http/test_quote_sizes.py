"""Large quotes: the write path reads the catalog once per table and the lines once, whatever the
number of lines, and gives the same quote (and the same first error) as pricing lines one by one.

Counts SQL statements on the engine, never time (speed is measured by ``bench/quotes.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event

from dps_common.json import loads

from quote_helpers import QUOTES, create_quote, error_fields, events, pricebook, product, quote_body


@contextmanager
def statements(engine, parameters: list | None = None) -> Iterator[list[str]]:
    """The SQL statements the engine runs inside the block (and their parameters into ``parameters``)."""
    seen: list[str] = []

    def record(conn, cursor, statement, params, context, executemany):
        seen.append(statement)
        if parameters is not None:
            parameters.append(params)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def reading(table: str, seen: list[str]) -> list[str]:
    return [s for s in seen if s.lstrip().upper().startswith("SELECT") and re.search(rf"\bFROM {table}\b", s)]


def line_writes(seen: list[str], parameters: list) -> list[list[dict]]:
    """Each UPDATE of quote_lines the block ran, as the lines it carried (one JSON array parameter)."""
    return [
        loads(params["lines"]) if isinstance(params, dict) and "lines" in params else [params]
        for statement, params in zip(seen, parameters, strict=True)
        if re.match(r"\s*UPDATE quote_lines\b", statement)
    ]


def varied_catalog(client, org) -> list[dict]:
    """Products of every shape the lines copy: tiers, one-time, annual, locked, with a short name."""
    tiers = {"USD": [{"upTo": "10", "unitPrice": "20.00"}, {"upTo": None, "unitPrice": "15.50"}],
             "EUR": [{"upTo": None, "unitPrice": "14.00"}]}
    return [
        product(client, org, prices={"USD": "100.00", "EUR": "90.00"}),
        product(client, org, priceModel="FLAT", priceFrequency="ANNUAL", prices={"USD": "12000", "EUR": "11000"}),
        product(client, org, priceModel="ONE_TIME_FEE", prices={"USD": "5000.00", "EUR": "4500"}, shortName="Onb"),
        product(client, org, priceModel="TIERED", prices={"USD": "20.00", "EUR": "18.00"}, tiers=tiers),
        product(client, org, prices={"USD": "0.50", "EUR": "0.45"}, locked=True, priceFrequency="QUARTERLY"),
    ]


def lines_of(items: list[dict], count: int) -> list[dict]:
    shapes = ({"quantity": "3"}, {"quantity": "12", "discountPercent": "12.5"}, {"netUnitPrice": "0.10"},
              {"quantity": "25", "customName": "API calls"}, {"quantity": "1000"})
    return [{"productId": items[i % len(items)]["id"], **shapes[(i // len(items)) % len(shapes)]} for i in range(count)]


def create_counting(client, org, engine, body: dict) -> tuple[dict, list[str]]:
    with statements(engine) as seen:
        quote = create_quote(client, org.admin, body)
    return quote, seen


def test_creating_a_quote_runs_as_many_statements_for_40_lines_as_for_2(client, org, engine):
    items = varied_catalog(client, org)
    book = pricebook(client, org, "USD", {items[0]["id"]: "80.00", items[3]["id"]: "19.00"})
    counts = []
    for size in (2, 40):
        for fields in ({}, {"pricebookId": book["id"]}):
            quote, seen = create_counting(client, org, engine, quote_body(*lines_of(items, size), **fields))
            assert quote["lineCount"] == size
            assert not reading("quote_lines", seen), "the answer is made from the lines inserted, not read back"
            counts.append((len(seen), len(reading("products", seen)), len(reading("pricebook_entries", seen))))
    small, small_book, large, large_book = counts
    assert large == small and large_book == small_book, counts
    assert small[1] == 1 and small_book[2] == 1, counts  # the products once, the pricebook's entries once


def test_a_large_quote_reads_back_as_created_and_its_event_holds_the_same(client, org, tx):
    items = varied_catalog(client, org)
    book = pricebook(client, org, "USD", {items[0]["id"]: "80.00", items[3]["id"]: "19.00"})
    created = create_quote(client, org.admin, quote_body(*lines_of(items, 60), pricebookId=book["id"]))
    read = client.simulate_get(f"{QUOTES}/{created['id']}", headers=org.admin.headers).json
    assert read == created
    assert [line["position"] for line in read["lines"]] == list(range(1, 61))
    assert read["lines"][0]["listUnitPrice"] == "80.00" and read["lines"][1]["listUnitPrice"] == "12000.00"
    assert read["lines"][4]["listUnitPrice"] == "0.50"
    [created_event] = [e for e in events(tx, org.id, "quote.created") if e["data"]["id"] == created["id"]]
    assert created_event["data"] == created


def test_the_first_line_the_catalog_refuses_is_the_one_named(client, org):
    good = product(client, org)
    inactive = product(client, org, active=False)
    euro_only = product(client, org, prices={"EUR": "10.00"})
    unknown = "0192a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b"
    cases = (
        ([good, good, inactive, euro_only], "lines[2].productId", "product_inactive"),
        ([good, euro_only, inactive], "lines[1].productId", "no_price_in_currency"),
        ([good, {"id": unknown}, inactive], "lines[1].productId", "unknown_reference"),
    )
    for line_products, field, code in cases:
        body = quote_body(*({"productId": p["id"]} for p in line_products))
        resp = client.simulate_post(QUOTES, json=body, headers=org.user.headers)
        assert resp.status_code == 400 and resp.json["code"] == code, resp.json
        assert error_fields(resp) == [field]
    # a pricing refusal on an earlier line comes before a catalog refusal on a later one
    body = quote_body({"productId": good["id"], "discountPercent": "101"}, {"productId": inactive["id"]})
    resp = client.simulate_post(QUOTES, json=body, headers=org.user.headers)
    assert resp.status_code == 400 and error_fields(resp) == ["lines[0].discountPercent"], resp.json


def test_editing_a_line_reads_the_lines_once(client, org, engine):
    items = varied_catalog(client, org)
    quote = create_quote(client, org.admin, quote_body(*lines_of(items, 30)))
    line = quote["lines"][7]
    with statements(engine) as seen:
        resp = client.simulate_patch(
            f"{QUOTES}/{quote['id']}/lines/{line['id']}", json={"quantity": "9"}, headers=org.admin.headers
        )
    assert resp.status_code == 200, resp.json
    assert resp.json["lines"][7]["quantity"] == "9" and resp.json["lineCount"] == 30
    assert len(reading("quote_lines", seen)) == 1, reading("quote_lines", seen)


def test_changing_the_currency_reads_the_pinned_versions_once(client, org, engine):
    items = varied_catalog(client, org)
    quote = create_quote(client, org.admin, quote_body(*lines_of(items, 30)))
    with statements(engine) as seen:
        resp = client.simulate_patch(f"{QUOTES}/{quote['id']}", json={"currency": "EUR"}, headers=org.admin.headers)
    assert resp.status_code == 200, resp.json
    assert resp.json["lines"][0]["listUnitPrice"] == "90.00" and resp.json["lines"][3]["listUnitPrice"] == "14.00"
    assert len(reading("product_versions", seen)) == 1, reading("product_versions", seen)
    assert len(reading("quote_lines", seen)) == 1, reading("quote_lines", seen)
    read = client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.admin.headers).json
    assert read == resp.json


def test_editing_one_line_of_a_large_quote_writes_that_line_alone(client, org, engine):
    items = varied_catalog(client, org)
    quote = create_quote(client, org.admin, quote_body(*lines_of(items, 30)))
    line = quote["lines"][7]
    parameters: list = []
    with statements(engine, parameters) as seen:
        resp = client.simulate_patch(
            f"{QUOTES}/{quote['id']}/lines/{line['id']}", json={"quantity": "9"}, headers=org.admin.headers
        )
    assert resp.status_code == 200, resp.json
    [written] = line_writes(seen, parameters)  # one statement, carrying the one line re-priced differently
    assert [w["id"] for w in written] == [line["id"]] and written[0]["quantity"] == "9"
    read = client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.admin.headers).json
    assert read == resp.json
    assert read["lines"][:7] == quote["lines"][:7] and read["lines"][8:] == quote["lines"][8:]


def test_removing_a_line_renumbers_the_lines_after_it_in_one_statement(client, org, engine):
    items = varied_catalog(client, org)
    quote = create_quote(client, org.admin, quote_body(*lines_of(items, 12)))
    parameters: list = []
    with statements(engine, parameters) as seen:
        resp = client.simulate_delete(f"{QUOTES}/{quote['id']}/lines/{quote['lines'][4]['id']}", headers=org.admin.headers)
    assert resp.status_code == 204, resp.text
    [written] = line_writes(seen, parameters)
    assert [(w["id"], w["position"]) for w in written] == [(q["id"], q["position"] - 1) for q in quote["lines"][5:]]
    read = client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.admin.headers).json
    assert [line["position"] for line in read["lines"]] == list(range(1, 12))
    assert [line["id"] for line in read["lines"]] == [line["id"] for line in quote["lines"] if line["position"] != 5]
    moved = [{**line, "position": line["position"] - 1} for line in quote["lines"][5:]]
    assert read["lines"][:4] == quote["lines"][:4] and read["lines"][4:] == moved
    assert read["lineCount"] == 11


def test_changing_the_currency_writes_every_line_in_one_statement(client, org, engine):
    items = varied_catalog(client, org)
    quote = create_quote(client, org.admin, quote_body(*lines_of(items, 30)))
    parameters: list = []
    with statements(engine, parameters) as seen:
        resp = client.simulate_patch(f"{QUOTES}/{quote['id']}", json={"currency": "EUR"}, headers=org.admin.headers)
    assert resp.status_code == 200, resp.json
    [written] = line_writes(seen, parameters)
    assert sorted(w["id"] for w in written) == sorted(line["id"] for line in quote["lines"])
    assert client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.admin.headers).json == resp.json
