"""The secrets-at-rest scan finds a secret planted in a text, a JSON and a bytea column of a real
PostgreSQL database, counts what it read, and finds nothing where nothing was planted."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from dps_common.db import sqlalchemy_url
from dps_testing.secrets_at_rest import Finding, scan_for_secrets
from dps_testing.services import fresh_database

SECRET = "whsec_planted0123456789/+="


def test_the_scan_finds_a_planted_secret_in_text_json_and_bytea_and_counts_what_it_read():
    with fresh_database("dps_secrets_scan") as url:
        engine = create_engine(sqlalchemy_url(url))
        try:
            with engine.begin() as connection:
                connection.execute(text("CREATE TABLE notes (id int, body text, meta jsonb, blob bytea, n int)"))
                connection.execute(text("CREATE TABLE counts (n int)"))
                connection.execute(
                    text("INSERT INTO notes VALUES (1, :s, '{}', NULL, 1), (2, 'x', :j, :b, 2), (3, NULL, NULL, NULL, 3)"),
                    {"s": f"prefix {SECRET} suffix", "j": f'{{"a": ["{SECRET}"]}}', "b": b"..." + SECRET.encode()},
                )
        finally:
            engine.dispose()
        report = scan_for_secrets({"db": url}, {"planted": SECRET, "absent": "whsec_never_stored_anywhere"})
    assert sorted(report.found, key=lambda f: f.column) == [
        Finding("db", "public.notes", "blob", "planted"),
        Finding("db", "public.notes", "body", "planted"),
        Finding("db", "public.notes", "meta", "planted"),
    ]
    assert (report.databases, report.tables, report.columns, report.rows, report.secrets) == (1, 2, 3, 3, 2)


def test_a_secret_too_short_to_search_for_is_refused():
    with pytest.raises(ValueError, match="too short"):
        scan_for_secrets({}, {"pin": "1234"})
