"""Secrets at rest: every text, bytea and JSON column of every table of the given databases,
searched for secrets a test was shown (a webhook signing secret, an API key, an OAuth token, a
sign-in token). Nothing secret is ever stored in plaintext: a test asserts ``report.found == []``.

``scan_for_secrets({"api": url, ...}, {"label": secret, ...})`` reads every row of every user table
(alembic's included) of each database, and looks for each secret as text in text and JSON columns
(JSON as PostgreSQL renders it) and as UTF-8 bytes in bytea columns. Any database can be added: the
scan knows no service's schema."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import create_engine, text

from dps_common.db import sqlalchemy_url
from dps_testing.secret_matcher import SecretMatcher

# information_schema.columns.data_type of the columns that can hold a secret as it was shown
_TEXT_TYPES = ("text", "character varying", "character", "json", "jsonb", "bytea", "ARRAY", "USER-DEFINED")
_COLUMNS = text(
    """
    SELECT c.table_schema, c.table_name, c.column_name, c.data_type
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
    ORDER BY c.table_schema, c.table_name, c.ordinal_position
    """
)


@dataclass(frozen=True, slots=True)
class Finding:
    database: str
    table: str
    column: str
    secret: str  # the secret's label, never the secret


@dataclass
class ScanReport:
    databases: int = 0
    tables: int = 0  # every table of every database (those without a text column included)
    columns: int = 0  # the text, bytea and JSON columns searched
    rows: int = 0
    secrets: int = 0
    found: list[Finding] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.databases} databases, {self.tables} tables, {self.columns} columns, {self.rows} rows scanned "
            f"for {self.secrets} secrets: {len(self.found)} found"
        )


def scan_for_secrets(databases: Mapping[str, str], secrets: Mapping[str, str]) -> ScanReport:
    """Search every row of every table of ``databases`` (name -> URL) for each of ``secrets``
    (label -> the secret as shown). Secrets shorter than 8 characters are refused (they would match
    by chance)."""
    matcher = SecretMatcher(secrets)
    report = ScanReport(databases=len(databases), secrets=len(secrets))
    for name, url in databases.items():
        _scan_database(name, url, matcher, report)
    return report


def _scan_database(name: str, url: str, matcher: SecretMatcher, report: ScanReport) -> None:
    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.connect() as connection:
            tables: dict[tuple[str, str], list[tuple[str, str]]] = {}
            for schema, table, column, data_type in connection.execute(_COLUMNS):
                tables.setdefault((schema, table), []).append((column, data_type))
            for (schema, table), columns in tables.items():
                report.tables += 1
                searched = [(column, data_type) for column, data_type in columns if data_type in _TEXT_TYPES]
                report.columns += len(searched)
                selected = ", ".join(_as_searchable(column, data_type) for column, data_type in searched) or "1"
                rows = connection.execute(text(f'SELECT {selected} FROM "{schema}"."{table}"'))  # noqa: S608
                for row in rows:
                    report.rows += 1
                    for (column, _), value in zip(searched, row, strict=False):
                        for label in _secrets_in(value, matcher):
                            report.found.append(Finding(name, f"{schema}.{table}", column, label))
    finally:
        engine.dispose()


def _as_searchable(column: str, data_type: str) -> str:
    """The column as text (JSON, arrays, enums: as PostgreSQL renders them), bytea as it is."""
    return f'"{column}"' if data_type in ("bytea", "text", "character varying", "character") else f'"{column}"::text'


def _secrets_in(value: Any, matcher: SecretMatcher) -> list[str]:
    if value is None:
        return []
    if isinstance(value, bytes | bytearray | memoryview):
        return matcher.in_bytes(bytes(value))
    return matcher.in_text(str(value))
