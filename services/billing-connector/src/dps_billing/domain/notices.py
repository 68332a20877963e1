"""Warnings and errors of a push plan, as data: a stable code, a message for people, the line concerned."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class NoticeCode(StrEnum):
    # warnings: the push goes ahead, and the user is told what was changed or left out
    LINE_SKIPPED = "line_skipped"  # tiered, ramped or hourly line
    AMOUNT_ROUNDED = "amount_rounded"  # the unit amount did not fit a whole minor unit
    QUANTITY_ROUNDED = "quantity_rounded"  # the quantity was not a whole number of at least 1
    DESCRIPTION_TRUNCATED = "description_truncated"
    END_DATE_PASSED = "end_date_passed"  # the quote's end date no longer lies ahead: fallback expiry
    # errors: nothing is created
    QUOTE_NOT_APPROVED = "quote_not_approved"
    NO_SUPPORTED_LINES = "no_supported_lines"
    LINE_INCONSISTENT = "line_inconsistent"
    INVALID_CURRENCY = "invalid_currency"
    NEGATIVE_AMOUNT = "negative_amount"
    INVALID_TERM = "invalid_term"
    PRODUCT_NAME_MISSING = "product_name_missing"
    LIMIT_EXCEEDED = "limit_exceeded"  # a platform limit; the message names it


@dataclass(frozen=True)
class Notice:
    code: NoticeCode
    message: str
    line_id: str | None = None  # the quote line concerned, when there is one
    limit: str | None = None  # for LIMIT_EXCEEDED: which limit, e.g. "quote.line_items"
