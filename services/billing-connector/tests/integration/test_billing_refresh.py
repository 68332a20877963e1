"""Access tokens: refreshed before expiry and after a 401, one refresh at a time across threads
(the platform rolls the refresh token), and a refused refresh marks the connection broken, once."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from dps_common.clock import utc_now
from dps_common.errors import Conflict

from dps_billing.adapters.billing_platform.client import BillingClient
from dps_billing.adapters.billing_platform.errors import PlatformUnauthorized
from dps_billing.adapters.outbox import OUTBOX
from dps_billing.adapters.tokens import TokenSealer
from dps_billing.composition import make_oauth
from dps_billing.db.models import BillingConnection
from dps_billing.domain.plan import ProductParams
from dps_billing.services.access import AccessTokens

from billing_helpers import connect, outbox_events


@pytest.fixture
def tokens(committed_tx, settings):
    return AccessTokens(committed_tx, TokenSealer(settings.billing_token_key), make_oauth(settings), utc_now, OUTBOX)


@pytest.fixture
def connected(served, fake_api, stand_in, committed_tx):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    return org


def refreshes(stand_in) -> list:
    return [r for r in stand_in.requests(path="/v1/oauth/token")
            if (r.form or {}).get("grant_type") == "refresh_token"]


def expire(committed_tx, organization_id) -> None:
    with committed_tx() as session:
        session.execute(update(BillingConnection).where(BillingConnection.organization_id == organization_id)
                        .values(access_expires_at=utc_now() - timedelta(seconds=1)))


def stored(committed_tx, settings, organization_id) -> tuple[BillingConnection, str, str]:
    with committed_tx.read() as session:
        row = session.scalars(select(BillingConnection)
                              .where(BillingConnection.organization_id == organization_id)).one()
    sealer = TokenSealer(settings.billing_token_key)
    return row, sealer.open(row.id, row.access_token_sealed), sealer.open(row.id, row.refresh_token_sealed)


def product(settings, token: str, account: str, key: str):
    client = BillingClient(token, account, api_url=settings.billing_api_url)
    return client.create_product(ProductParams("Check", {}), idempotency_key=key)


def test_a_token_about_to_expire_is_refreshed_and_the_new_refresh_token_stored(
        connected, tokens, committed_tx, settings, stand_in):
    _, old_access, old_refresh = stored(committed_tx, settings, connected.id)
    assert tokens.current(connected.id).access_token == old_access  # fresh: no refresh
    before = len(refreshes(stand_in))
    expire(committed_tx, connected.id)
    access = tokens.current(connected.id)
    row, new_access, new_refresh = stored(committed_tx, settings, connected.id)
    assert len(refreshes(stand_in)) == before + 1
    assert access.access_token == new_access != old_access
    assert new_refresh != old_refresh  # it rolled, and the new one is what is stored
    assert row.access_expires_at > utc_now() + timedelta(minutes=59)
    assert product(settings, new_access, row.account_id, f"refresh-{row.id}").id.startswith("prod_")


def test_a_401_refreshes_once_and_the_call_succeeds_with_the_new_token(
        connected, tokens, committed_tx, settings, stand_in):
    row, access, _ = stored(committed_tx, settings, connected.id)
    stand_in.expire_access_tokens()
    with pytest.raises(PlatformUnauthorized):
        product(settings, access, row.account_id, f"401-{row.id}")
    before = len(refreshes(stand_in))
    renewed = tokens.after_unauthorized(connected.id, access)
    assert renewed.access_token != access
    assert len(refreshes(stand_in)) == before + 1
    assert product(settings, renewed.access_token, row.account_id, f"401-{row.id}").id.startswith("prod_")
    # a second worker that saw the same 401 gets the new token without another refresh
    assert tokens.after_unauthorized(connected.id, access).access_token == renewed.access_token
    assert len(refreshes(stand_in)) == before + 1


def test_two_threads_refreshing_at_once_make_one_refresh_and_lose_no_token(
        connected, tokens, committed_tx, settings, stand_in):
    expire(committed_tx, connected.id)
    before = len(refreshes(stand_in))
    start = threading.Barrier(2)
    got: list[str] = []

    def refresh() -> None:
        start.wait()
        got.append(tokens.current(connected.id).access_token)

    threads = [threading.Thread(target=refresh) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(refreshes(stand_in)) == before + 1
    assert len(got) == 2 and got[0] == got[1]
    # the stored refresh token is the live one: the next refresh works
    expire(committed_tx, connected.id)
    tokens.current(connected.id)
    row, _, _ = stored(committed_tx, settings, connected.id)
    assert row.status == "connected"


def test_invalid_grant_marks_the_connection_broken_and_is_never_retried(
        connected, tokens, committed_tx, settings, stand_in):
    row, _, _ = stored(committed_tx, settings, connected.id)
    stand_in.uninstall(row.account_id)
    stand_in.wait_for_webhooks()
    # the uninstall's webhook already removed the connection; put one back with the revoked tokens
    with committed_tx() as session:
        session.add(BillingConnection(
            id=row.id, organization_id=row.organization_id, account_id=row.account_id, livemode=row.livemode,
            status="connected", connected_by=row.connected_by, connected_at=row.connected_at,
            access_token_sealed=row.access_token_sealed, refresh_token_sealed=row.refresh_token_sealed,
            access_expires_at=utc_now() - timedelta(seconds=1), updated_at=utc_now(),
        ))
    before = len(refreshes(stand_in))
    with pytest.raises(Conflict) as raised:
        tokens.current(connected.id)
    assert raised.value.code == "billing_connection_broken"
    assert len(refreshes(stand_in)) == before + 1
    broken, _, _ = stored(committed_tx, settings, connected.id)
    assert broken.status == "broken" and "refused" in (broken.broken_reason or "")
    with pytest.raises(Conflict):
        tokens.current(connected.id)
    assert len(refreshes(stand_in)) == before + 1  # never loops
    with committed_tx.read() as session:
        events = outbox_events(session, connected.id, "billing.connection.broken")
    assert len(events) == 1
    data = events[0]["data"]
    assert data["status"] == "broken" and data["accountId"] == row.account_id
    assert not any("token" in key.lower() for key in data)
