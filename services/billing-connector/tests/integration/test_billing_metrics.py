"""The connector's scrape-time metrics on its app's ``/metrics`` (``dps_billing.composition.build_http``), from a known
state of the module's own database: ``dps_billing_pushes_queued``/``_running`` count the pushes waiting
and held, and ``dps_outbox_oldest_unpublished_age_seconds{service="billing-connector"}`` is the age of
the oldest event the relay has not published (no relay runs here)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import uuid4

import falcon.testing
import pytest
from prometheus_client.parser import text_string_to_metric_families

from dps_common.db import Transactions
from dps_common.outbox.table import OUTBOX

from dps_billing.composition import build_http
from dps_billing.db.push_claims import claim_pushes
from dps_billing.settings import Settings

from billing_helpers import connect, line, quote
from push_helpers import request_push

LAG = "dps_outbox_oldest_unpublished_age_seconds"


def scrape(settings: Settings, tx: Transactions) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The app's ``/metrics``, as ``{(name, labels): value}``. The app is made here, so its collectors
    read the module's committed data (each app registers its own for the process)."""
    resp = falcon.testing.TestClient(build_http(settings, tx=tx)).simulate_get("/metrics")
    assert resp.status_code == 200, resp.text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(resp.text)
        for sample in family.samples
    }


@pytest.fixture
def org(served, fake_api, stand_in):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    return org


def _pushes(settings: Settings, tx: Transactions) -> tuple[float, float]:
    samples = scrape(settings, tx)
    return samples[("dps_billing_pushes_queued", ())], samples[("dps_billing_pushes_running", ())]


def test_queued_and_running_pushes_are_counted(served, fake_api, org, settings, committed_tx: Transactions) -> None:
    # the database may hold other tests' pushes (a worker's database is shared by its modules): the
    # counts are read as differences from what was there
    queued, running = _pushes(settings, committed_tx)
    snapshot = quote(org.id, org.user.user_id, [line()])
    fake_api.put_quote(snapshot)
    request_push(served, org.admin.key, snapshot)  # no worker runs in this module: it stays queued
    assert _pushes(settings, committed_tx) == (queued + 1, running)
    with committed_tx() as session:  # a worker's claim (and no worker to finish it)
        assert claim_pushes(session, 1_000, 600)
    # the claim also takes over other modules' pushes whose lease ended, already counted as running:
    # what moved is what left the queue, ours at least, and each such push is running now
    queued_after, running_after = _pushes(settings, committed_tx)
    moved = queued + 1 - queued_after
    assert moved >= 1 and running_after == running + moved


def test_the_outbox_lag_is_the_age_of_the_oldest_unpublished_event(settings, committed_tx: Transactions) -> None:
    with committed_tx() as session:
        session.execute(OUTBOX.update().where(OUTBOX.c.published_at.is_(None)).values(published_at=datetime.now(UTC)))
    assert scrape(settings, committed_tx)[(LAG, (("service", "billing-connector"),))] == 0
    with committed_tx() as session:
        session.execute(
            OUTBOX.insert().values(
                id=uuid4(), organization_id=uuid4(), event_type="billing.quote_pushed",
                occurred_at=datetime.now(UTC) - timedelta(seconds=600), envelope={},
            )
        )
    lag = scrape(settings, committed_tx)[(LAG, (("service", "billing-connector"),))]
    assert 600 <= lag < 3600
