"""Errors in Stripe's wire shapes: API errors (`{"error": {...}}`) and OAuth errors (`{"error": "code"}`)."""

from __future__ import annotations

from typing import Any


def doc_url(code: str) -> str:
    return "https://stripe.com/docs/error-codes/" + code.replace("_", "-")


class ApiError(Exception):
    """An answer in Stripe's API error shape. Like Stripe, `code`, `param` and `doc_url` appear only when
    they apply."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.code is not None:
            error["code"] = self.code
            error["doc_url"] = doc_url(self.code)
        if self.param is not None:
            error["param"] = self.param
        return {"error": error}


def invalid(message: str, *, param: str | None = None, code: str | None = None, status: int = 400) -> ApiError:
    return ApiError(status, message, param=param, code=code)


class OAuthError(Exception):
    """An answer of the OAuth endpoints: `{"error": "invalid_grant", "error_description": "..."}`."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status

    def body(self) -> dict[str, Any]:
        return {"error": self.error, "error_description": self.description}
