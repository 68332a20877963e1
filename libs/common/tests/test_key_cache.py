"""API key format, keyed hashing, and the time-bounded lookup cache."""

import pytest

from dps_common.auth.cache import TtlCache
from dps_common.auth.keys import (
    format_key,
    generate_key_id,
    generate_secret,
    hash_secret,
    parse_key,
    secret_matches,
)


def test_generated_keys_parse_back():
    key_id, secret = generate_key_id(), generate_secret()
    parsed = parse_key(format_key(key_id, secret))
    assert parsed is not None and parsed.key_id == key_id and parsed.secret == secret


@pytest.mark.parametrize("raw", ["", "dps", "dps_", "dps__secret", "dps_id_", "xyz_id_secret", "dps_id_" + "x" * 300])
def test_malformed_keys_do_not_parse(raw):
    assert parse_key(raw) is None


def test_secret_check_uses_the_pepper():
    stored = hash_secret(b"p" * 32, "secret")
    assert secret_matches(b"p" * 32, "secret", stored)
    assert not secret_matches(b"p" * 32, "secreT", stored)
    assert not secret_matches(b"q" * 32, "secret", stored)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_entries_expire_after_the_ttl_so_revocations_elsewhere_take_effect():
    clock, store = Clock(), {"k": "v1"}
    cache = TtlCache(600, clock=clock)
    assert cache.get("k", store.get) == "v1"
    store["k"] = None  # revoked by another process
    clock.now = 599.9
    assert cache.get("k", store.get) == "v1"
    clock.now = 600.0
    assert cache.get("k", store.get) is None


def test_invalidate_takes_effect_at_once():
    store = {"k": "v1"}
    cache = TtlCache(600)
    cache.get("k", store.get)
    store["k"] = "v2"
    cache.invalidate("k")
    assert cache.get("k", store.get) == "v2"


def test_ttl_above_ten_minutes_is_refused():
    with pytest.raises(ValueError):
        TtlCache(601)


def test_a_full_cache_stays_bounded():
    cache = TtlCache(600, max_entries=10)
    for i in range(25):
        cache.get(str(i), lambda k: k)
    assert len(cache._entries) <= 10
