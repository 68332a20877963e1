"""Building blocks shared by the api's request and response models."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

DecimalString = Annotated[
    str,
    StringConstraints(pattern=r"^-?\d{1,15}(\.\d{1,6})?$"),
    Field(description="A decimal number written as a string, e.g. \"1234.50\".", examples=["1234.50"]),
]
CurrencyCode = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$"), Field(description="ISO 4217 code", examples=["USD"])]
# PostgreSQL text cannot hold NUL: the pattern refuses it with a 400 (and documents it)
Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True, pattern=r"^[^\x00]*$")]


class RequestModel(BaseModel):
    """Unknown fields are dropped silently (spec section 4); types are checked strictly."""

    model_config = ConfigDict(extra="ignore", strict=True, str_strip_whitespace=False)


class ResponseModel(BaseModel):
    """Documentation of a response; responses themselves are rendered from rows to plain dicts."""

    model_config = ConfigDict(extra="allow")


def to_decimal(value: str) -> Decimal:
    return Decimal(value)
