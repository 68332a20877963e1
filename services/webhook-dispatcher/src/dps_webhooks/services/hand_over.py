"""The hand-over from the event consumer to the delivery worker of the same process.

The consumer stores the deliveries that its worker can start soon already claimed for it, so they
cost no claim statement and wake no other worker (``services/intake.accept_events``). This is the one
interface between the two: the worker implements it (``workers/deliveries.DeliveryWorker``), the
consumer's intake (``services/event_intake.py``) receives it at composition (``composition``), and
neither worker imports the other.
"""

from __future__ import annotations

from typing import Protocol

from dps_webhooks.domain.claims import Claimed


class HandOver(Protocol):
    """Where the consumer hands the deliveries it stores already claimed."""

    def wait_for_room(self, count: int) -> None:
        """Before storing a batch of ``count`` events: wait (briefly) until they could be taken on."""

    def take_on(self, count: int) -> int:
        """Reserve up to ``count`` attempts for deliveries about to be stored claimed; how many may be."""

    def give_back(self, count: int) -> None:
        """Reservations not used after all (the batch was not stored)."""

    def start(self, claimed: list[Claimed]) -> None:
        """Make the attempts of the deliveries stored claimed (after the commit)."""


class NoHandOver:
    """A consumer without a worker beside it: nothing is taken on, every delivery is stored due for
    any worker to claim."""

    def wait_for_room(self, count: int) -> None:
        pass

    def take_on(self, count: int) -> int:
        return 0

    def give_back(self, count: int) -> None:
        pass

    def start(self, claimed: list[Claimed]) -> None:
        pass
