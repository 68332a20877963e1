"""The rules of idempotent requests (``dps_common.idempotency.rules``), without I/O: what a valid
key is, when two bodies are the same request, which answers are kept for replay."""

from __future__ import annotations

import pytest

from dps_common.errors import BadRequest, Conflict, UnprocessableContent, http_status_of
from dps_common.idempotency.rules import (
    RequestSignature,
    body_fingerprint,
    in_progress,
    is_kept,
    same_request,
    valid_key,
)


@pytest.mark.parametrize("key", ["a", "x" * 255, "order-42/retry:1", "9f1c 2b", "~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./"])
def test_a_key_of_1_to_255_printable_ascii_characters_is_valid(key):
    assert valid_key(key) == key


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9", "tab\there", "new\nline", "nul\x00", "del\x7f", "\u00a0"])
def test_any_other_key_is_a_400_naming_the_header(key):
    with pytest.raises(BadRequest) as refused:
        valid_key(key)
    assert http_status_of(refused.value) == 400
    assert refused.value.code == "invalid_idempotency_key"
    assert "Idempotency-Key" in refused.value.detail and "255" in refused.value.detail


def test_the_fingerprint_ignores_key_order_and_whitespace_of_json_bodies():
    compact = b'{"name":"Q","lines":[{"productId":"p","quantity":"1"}]}'
    spaced = b'{ "lines": [ {"quantity": "1", "productId": "p"} ],\n  "name": "Q" }\n'
    assert body_fingerprint(compact) == body_fingerprint(spaced)
    assert len(body_fingerprint(compact)) == 64  # SHA-256, hex


@pytest.mark.parametrize(
    "other",
    [
        b'{"name":"Q","lines":[{"productId":"p","quantity":"2"}]}',  # another value
        b'{"name":"Q","lines":[]}',  # a field left out
        b'{"name":"Q","lines":[{"productId":"p","quantity":"1"}],"x":1}',  # a field more
        b'["name","Q"]',
    ],
)
def test_the_fingerprint_tells_different_bodies_apart(other):
    assert body_fingerprint(other) != body_fingerprint(b'{"name":"Q","lines":[{"productId":"p","quantity":"1"}]}')


def test_an_empty_body_is_the_same_request_as_an_empty_object_and_unparsable_bodies_hash_as_sent():
    assert body_fingerprint(b"") == body_fingerprint(b"  ") == body_fingerprint(b"{}")
    assert body_fingerprint(b"{not json") != body_fingerprint(b"{not  json")
    assert body_fingerprint(b'{"n": 123456789012345678901234567890}') != body_fingerprint(b'{"n": 1}')


@pytest.mark.parametrize("status", [200, 201, 202, 204, 400, 404, 410, 422])
def test_answers_of_an_executed_operation_are_kept(status):
    assert is_kept(status)


@pytest.mark.parametrize("status", [401, 403, 408, 409, 413, 415, 429, 500, 502, 503, 504])
def test_refusals_before_execution_conflicts_and_server_errors_are_not_kept(status):
    assert not is_kept(status)


def test_a_retry_must_be_the_same_method_path_and_body():
    first = RequestSignature("POST", "/external/v1/pricing-quotes", "a" * 64)
    same_request(first, RequestSignature("POST", "/external/v1/pricing-quotes", "a" * 64))  # no error
    with pytest.raises(UnprocessableContent) as other_path:
        same_request(first, RequestSignature("POST", "/external/v1/opportunities", "a" * 64))
    assert http_status_of(other_path.value) == 422
    assert other_path.value.code == "idempotency_key_reused"
    assert "POST /external/v1/pricing-quotes" in other_path.value.detail
    with pytest.raises(UnprocessableContent) as other_body:
        same_request(first, RequestSignature("POST", "/external/v1/pricing-quotes", "b" * 64))
    assert "another request body" in other_body.value.detail


def test_a_retry_while_the_first_runs_is_a_409():
    error = in_progress()
    assert isinstance(error, Conflict) and http_status_of(error) == 409
    assert error.code == "idempotency_key_in_use"
