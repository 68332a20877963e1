"""The billing platform's limits, checked while planning so that a push that would break one creates
nothing at all (Stripe's documented limits; a quote becomes a subscription with the same caps)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dps_billing.domain.notices import Notice, NoticeCode

MAX_LINE_ITEMS = 20  # per quote, and per subscription it becomes
MAX_METADATA_KEYS = 50
MAX_METADATA_KEY_LENGTH = 40
MAX_METADATA_VALUE_LENGTH = 500
MAX_DESCRIPTION_LENGTH = 500
MAX_PRODUCT_NAME_LENGTH = 5000
MAX_INTERVAL_MONTHS = 36  # recurring interval x count: at most three years


def _exceeded(limit: str, message: str, line_id: str | None = None) -> Notice:
    return Notice(code=NoticeCode.LIMIT_EXCEEDED, message=message, line_id=line_id, limit=limit)


def metadata_problems(where: str, metadata: Mapping[str, str], line_id: str | None = None) -> list[Notice]:
    """``where`` names the object whose metadata this is (``product``, ``quote``, ...)."""
    problems: list[Notice] = []
    if len(metadata) > MAX_METADATA_KEYS:
        problems.append(_exceeded(
            "metadata.keys", f"{where} metadata has {len(metadata)} keys; the billing platform accepts at most "
            f"{MAX_METADATA_KEYS}", line_id))
    for key, value in metadata.items():
        if len(key) > MAX_METADATA_KEY_LENGTH or "[" in key or "]" in key:
            problems.append(_exceeded(
                "metadata.key_length", f"{where} metadata key {key[:MAX_METADATA_KEY_LENGTH]!r}... is longer than "
                f"{MAX_METADATA_KEY_LENGTH} characters or contains brackets", line_id))
        if len(value) > MAX_METADATA_VALUE_LENGTH:
            problems.append(_exceeded(
                "metadata.value_length", f"{where} metadata {key} is {len(value)} characters long; the billing "
                f"platform accepts at most {MAX_METADATA_VALUE_LENGTH}", line_id))
    return problems


def line_item_problems(count: int) -> list[Notice]:
    if count <= MAX_LINE_ITEMS:
        return []
    return [_exceeded(
        "quote.line_items", f"the quote has {count} supported lines; a billing platform quote (and the subscription "
        f"it becomes) takes at most {MAX_LINE_ITEMS} line items")]


def product_name_problems(name: str, line_id: str) -> list[Notice]:
    if len(name) <= MAX_PRODUCT_NAME_LENGTH:
        return []
    return [_exceeded(
        "product.name", f"the product name of line {line_id} is {len(name)} characters long; the billing platform "
        f"accepts at most {MAX_PRODUCT_NAME_LENGTH}", line_id)]


def interval_problems(intervals: Sequence[tuple[str, int]]) -> list[Notice]:
    """``intervals``: (interval, count) of every recurring price of the quote."""
    problems: list[Notice] = []
    distinct = sorted(set(intervals))
    if len(distinct) > 1:
        shown = ", ".join(f"every {count} {interval}" for interval, count in distinct)
        problems.append(_exceeded(
            "quote.interval", f"the recurring prices bill at different intervals ({shown}); a billing platform "
            "quote (and the subscription it becomes) bills all its recurring prices at one interval"))
    for interval, count in distinct:
        months = count * {"month": 1, "year": 12}.get(interval, 0)
        if interval not in ("month", "year") or count < 1 or months > MAX_INTERVAL_MONTHS:
            problems.append(_exceeded(
                "price.recurring", f"a recurring interval of every {count} {interval} is not one the billing platform "
                f"accepts (month or year, at most {MAX_INTERVAL_MONTHS} months)"))
    return problems
