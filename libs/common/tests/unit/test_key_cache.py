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


def test_a_load_overtaken_by_an_invalidation_is_not_stored():
    # the load read the key just before the revocation committed; the key event arrived meanwhile
    cache: TtlCache[str] = TtlCache(600)
    store = {"k": "active"}

    def slow_load(key):
        value = store[key]
        store[key] = None  # revoked now...
        cache.invalidate(key)  # ...and the event dropped the key while the load was under way
        return value

    assert cache.get("k", slow_load) == "active"  # this request raced the revocation
    assert cache.get("k", store.get) is None  # but the stale answer was not kept for a TTL


def test_clear_drops_every_entry_and_the_loads_under_way():
    cache: TtlCache[str] = TtlCache(600)
    cache.get("a", lambda _: "1")
    ticket = cache.ticket()
    cache.clear()
    cache.put("b", "2", ticket)
    assert cache.peek("a") is None and cache.peek("b") is None


def test_an_entry_expires_a_ttl_after_its_load_began():
    clock = Clock()
    cache: TtlCache[str] = TtlCache(10, clock=clock)
    ticket = cache.ticket()
    clock.now = 4.0  # a slow answer
    cache.put("k", "v", ticket)
    clock.now = 9.9
    assert cache.peek("k") == "v"
    clock.now = 10.0
    assert cache.peek("k") is None


def test_the_authenticator_checks_the_secret_with_the_stored_keyed_hash_and_the_expiry():
    """Its precomputed HMAC is the stored hash's (``hash_secret``): the right secret passes, a secret
    one character off, another pepper's hash and an expired credential do not, cached or fresh."""
    from datetime import UTC, datetime
    from uuid import uuid4

    from dps_common.auth.authenticator import Authenticator
    from dps_common.auth.cache import KeyRecord
    from dps_common.auth.principal import Principal
    from dps_common.auth.scopes import Role
    from dps_common.errors import Unauthorized

    pepper, now = b"p" * 32, datetime(2026, 11, 25, tzinfo=UTC)
    principal = Principal(uuid4(), "Org", uuid4(), Role.ADMIN, "keyid")
    records = {
        "keyid": KeyRecord(hash_secret(pepper, "secret"), principal),
        "other": KeyRecord(hash_secret(b"q" * 32, "secret"), principal),
        "ended": KeyRecord(hash_secret(pepper, "secret"), principal, expires_at=now),
    }
    auth = Authenticator(type("Store", (), {"find": staticmethod(records.get)})(), pepper, TtlCache(600), lambda: now)
    for _ in range(2):  # the second time from the cache
        assert auth.authenticate(format_key("keyid", "secret")) is principal
        assert auth.authenticate_fresh(format_key("keyid", "secret")) is principal
        for refused in ("dps_keyid_secreT", "dps_other_secret", "dps_ended_secret", "dps_nokey_secret"):
            with pytest.raises(Unauthorized):
                auth.authenticate(refused)


def test_a_key_checked_before_is_refused_once_revoked_rotated_or_expired():
    """The authenticator remembers keys it checked (no parse, no HMAC on the next request) only
    against the record the cache holds: a revocation (``forget``), a rotation seen after the TTL, and
    an expiry reached meanwhile all refuse the key at once, as without the memory."""
    from datetime import UTC, datetime, timedelta
    from uuid import uuid4

    from dps_common.auth.authenticator import Authenticator
    from dps_common.auth.cache import KeyRecord
    from dps_common.auth.principal import Principal
    from dps_common.auth.scopes import Role
    from dps_common.errors import Unauthorized

    pepper, clock, now = b"p" * 32, Clock(), [datetime(2026, 11, 25, tzinfo=UTC)]
    principal = Principal(uuid4(), "Org", uuid4(), Role.ADMIN, "keyid")
    records = {"keyid": KeyRecord(hash_secret(pepper, "secret"), principal, expires_at=now[0] + timedelta(hours=1))}
    auth = Authenticator(type("Store", (), {"find": staticmethod(records.get)})(), pepper, TtlCache(60, clock=clock),
                         lambda: now[0])
    key = format_key("keyid", "secret")
    assert auth.authenticate(key) is principal and auth.authenticate(key) is principal
    del records["keyid"]  # revoked here: the key event empties the cache
    auth.forget("keyid")
    with pytest.raises(Unauthorized):
        auth.authenticate(key)
    records["keyid"] = KeyRecord(hash_secret(pepper, "secret"), principal, expires_at=now[0] + timedelta(hours=1))
    clock.now = 60.0  # the refusal was cached for the TTL, as before
    assert auth.authenticate(key) is principal
    records["keyid"] = KeyRecord(hash_secret(pepper, "rotated"), principal)  # elsewhere: seen after the TTL
    assert auth.authenticate(key) is principal  # the cached record, as before
    clock.now = 120.0
    with pytest.raises(Unauthorized):
        auth.authenticate(key)
    assert auth.authenticate(format_key("keyid", "rotated")) is principal
    records["keyid"] = KeyRecord(hash_secret(pepper, "secret"), principal, expires_at=now[0] + timedelta(hours=1))
    clock.now = 180.0
    assert auth.authenticate(key) is principal
    now[0] += timedelta(hours=1)  # the credential's end
    with pytest.raises(Unauthorized):
        auth.authenticate(key)
    with pytest.raises(Unauthorized):
        auth.authenticate(format_key("keyid", "secreT"))


def test_a_remembered_key_survives_the_memory_being_emptied_while_its_record_loads():
    """Under gevent the cache's load yields, and a key event meanwhile (``forget_all`` on a
    resubscription) empties what the authenticator remembers: the request is still answered."""
    from uuid import uuid4

    from dps_common.auth.authenticator import Authenticator
    from dps_common.auth.cache import KeyRecord
    from dps_common.auth.principal import Principal
    from dps_common.auth.scopes import Role

    pepper, clock = b"p" * 32, Clock()
    principal = Principal(uuid4(), "Org", uuid4(), Role.ADMIN, "keyid")
    events = []

    def find(key_id):
        for event in events:
            event()
        return KeyRecord(hash_secret(pepper, "secret"), principal)

    auth = Authenticator(type("Store", (), {"find": staticmethod(find)})(), pepper, TtlCache(60, clock=clock))
    key = format_key("keyid", "secret")
    assert auth.authenticate(key) is principal
    clock.now, events[:] = 60.0, [auth.forget_all]  # the entry's TTL ended: loaded again, and the event comes
    assert auth.authenticate(key) is principal
