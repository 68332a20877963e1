"""The strict bracket form parser, without HTTP."""

from __future__ import annotations

import pytest

from dps_billing_stand_in.errors import ApiError
from dps_billing_stand_in.forms import parse_form, with_arrays


def test_brackets_nest_and_arrays_appear_in_recordings() -> None:
    tree = parse_form(
        b"line_items[0][price]=price_a&line_items[1][price]=price_b&line_items[1][quantity]=2"
        b"&subscription_data[metadata][k]=v&metadata[0]=zero&recurring[interval]=month&name=A%26B"
    )
    assert tree["line_items"] == {"0": {"price": "price_a"}, "1": {"price": "price_b", "quantity": "2"}}
    assert tree["name"] == "A&B"
    arrays = with_arrays(tree)
    assert arrays["line_items"] == [{"price": "price_a"}, {"price": "price_b", "quantity": "2"}]
    assert arrays["metadata"] == {"0": "zero"}  # metadata keys stay keys
    assert arrays["subscription_data"] == {"metadata": {"k": "v"}}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"name=a&name=b", "sent twice"),
        (b"recurring=x&recurring[interval]=month", "conflicts"),
        (b"recurring[interval]=month&recurring=x", "sent both"),
        (b"expand[]=line_items", "explicit indexes"),
        (b"metadata[a[b]]=x", "can't contain"),
        (b"a]=1", "Invalid parameter name"),
        (b"name=%ff", "Invalid form-encoded body"),
        (b"name", "Invalid form-encoded body"),
    ],
)
def test_malformed_bodies_are_refused(body: bytes, fragment: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse_form(body)
    assert caught.value.status == 400
    assert fragment in caught.value.message


def test_an_empty_body_is_no_parameters() -> None:
    assert parse_form(b"") == {}
