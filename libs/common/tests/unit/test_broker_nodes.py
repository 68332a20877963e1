"""The broker settings of issue 28: quorum queues by default (``AMQP_QUEUE_TYPE``) and an ``AMQP_URL``
that lists a cluster's nodes (kombu's failover), its passwords never logged."""

from __future__ import annotations

import pytest

from dps_common.messaging.broker import connect, node_urls, redacted
from dps_common.messaging.queues import CLASSIC, QUORUM, durable_queue_arguments, queue_type
from dps_common.settings import SettingsError

NODES = "amqp://dps:pw0@rabbit-0:5672/dps;amqp://dps:pw1@rabbit-1:5672/dps;amqp://dps:pw2@rabbit-2:5672/dps"


def test_durable_queues_are_quorum_queues_unless_set_to_classic() -> None:
    assert queue_type({}) == QUORUM
    assert queue_type({"AMQP_QUEUE_TYPE": ""}) == QUORUM
    assert queue_type({"AMQP_QUEUE_TYPE": "classic"}) == CLASSIC
    assert durable_queue_arguments(single_active_consumer=True, type_=QUORUM) == {
        "x-queue-type": "quorum",
        "x-single-active-consumer": True,
    }
    # classic: declared exactly as before issue 28, so an existing classic queue is redeclared as it is
    assert durable_queue_arguments(single_active_consumer=True, type_=CLASSIC) == {"x-single-active-consumer": True}


def test_an_unknown_queue_type_is_refused() -> None:
    with pytest.raises(SettingsError, match="AMQP_QUEUE_TYPE"):
        queue_type({"AMQP_QUEUE_TYPE": "stream"})


def test_a_url_may_list_the_nodes_of_a_cluster() -> None:
    assert node_urls(NODES) == NODES.split(";")
    assert node_urls("amqp://guest:guest@127.0.0.1:5672//") == ["amqp://guest:guest@127.0.0.1:5672//"]
    with pytest.raises(ValueError):
        node_urls(" ; ")


def test_a_connection_tries_every_node_once_from_a_random_one() -> None:
    firsts = set()
    for _ in range(60):
        connection = connect(NODES)
        order = connection.alt
        assert sorted(order) == sorted(NODES.split(";"))
        assert order in [NODES.split(";")[i:] + NODES.split(";")[:i] for i in range(3)]  # the list's order, rotated
        assert connection.hostname == order[0].split("@")[1].split(":")[0]
        firsts.add(order[0])
    assert len(firsts) == 3  # processes spread over the nodes (a 1 in 10^10 chance of failing by luck)


def test_no_password_of_any_node_is_logged() -> None:
    shown = redacted(NODES)
    assert "pw0" not in shown and "pw1" not in shown and "pw2" not in shown
    assert shown.count("rabbit-") == 3
