"""Building blocks shared by the api's request and response models."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import MISSING, BaseModel, ConfigDict, Field, StringConstraints

from dps_api.domain.commands import NOT_SENT, NotSent

T = TypeVar("T")

# ASCII digits only: a regex ``\d`` (pydantic's Rust engine, like Python's) also matches full-width,
# Arabic-Indic and other Unicode digits, which Decimal() would then read as the number they look like.
DecimalString = Annotated[
    str,
    StringConstraints(pattern=r"^-?[0-9]{1,15}(\.[0-9]{1,6})?$"),
    # format "decimal", as in answers (DecimalText): a client generator keeps it exact, not a float
    Field(description="A decimal number written as a string, e.g. \"1234.50\".", examples=["1234.50"],
          json_schema_extra={"format": "decimal"}),
]
CurrencyCode = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$"), Field(description="ISO 4217 code", examples=["USD"])]
# PostgreSQL text cannot hold NUL: the pattern refuses it with a 400 (and documents it)
Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True, pattern=r"^[^\x00]*$")]

# The default of a partial update's fields: ``MISSING`` means "not sent" (an explicit null stays a
# value, refused by non-nullable types). The document shows no default for them: the field is
# optional (not in ``required``) and its model says that only the fields sent change; a
# ``"default": null`` would claim that null is what omitting it means, and is invalid OpenAPI
# where null is not an allowed value.
UNSENT: Any = Field(default=MISSING)


def unsent(**kwargs: Any) -> Any:
    """``UNSENT`` with more of ``Field``'s arguments (description, bounds)."""
    return Field(default=MISSING, **kwargs)


def patch(value: T | MISSING) -> T | NotSent:
    """A request field as a command field: not sent -> ``NOT_SENT``."""
    return NOT_SENT if value is MISSING else value


class RequestModel(BaseModel):
    """Unknown fields are dropped silently (spec section 4); types are checked strictly."""

    model_config = ConfigDict(extra="ignore", strict=True, str_strip_whitespace=False)


class ResponseModel(BaseModel):
    """Documentation of a response. Each resource renders its domain results to JSON with one
    function beside its response models; a test per resource holds the two together."""

    model_config = ConfigDict(extra="allow")
