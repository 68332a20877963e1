"""Publisher confirms for a batch: the broker's verdict on each message, from its ack and nack frames."""

from __future__ import annotations


class BatchConfirms:
    """The verdicts on one batch of messages published back to back on a channel in confirm mode.

    The broker numbers a confirm-mode channel's publishes 1, 2, 3 ... (delivery tags), so the batch's
    messages hold the tags ``first_tag`` to ``first_tag + count - 1``. An ack or nack settles one tag,
    or with ``multiple`` every tag up to it that is still open. RabbitMQ returns an unroutable
    ``mandatory`` message (``returned``) before it acks it, so by its ack the return is known."""

    def __init__(self, first_tag: int, count: int):
        self.first_tag = first_tag
        self.unsettled = count
        self.returned: dict[str, str] = {}  # message id -> routing key, of the messages returned
        self._verdicts: list[bool | None] = [None] * count  # True: acked, False: nacked
        self._settled_below = 0  # every position before this one is settled

    def ack(self, delivery_tag: int, multiple: bool) -> None:
        self._settle(delivery_tag, multiple, True)

    def nack(self, delivery_tag: int, multiple: bool) -> None:
        self._settle(delivery_tag, multiple, False)

    def acked(self) -> list[int]:
        """The positions in the batch the broker acked, in publish order."""
        return [position for position, verdict in enumerate(self._verdicts) if verdict]

    def nacked(self) -> int:
        return self._verdicts.count(False)

    def _settle(self, delivery_tag: int, multiple: bool, verdict: bool) -> None:
        verdicts = self._verdicts
        last = delivery_tag - self.first_tag
        if not multiple and not 0 <= last < len(verdicts):
            return  # not one of this batch's messages
        for position in range(self._settled_below if multiple else last, min(last, len(verdicts) - 1) + 1):
            if verdicts[position] is None:
                verdicts[position] = verdict
                self.unsettled -= 1
        while self._settled_below < len(verdicts) and verdicts[self._settled_below] is not None:
            self._settled_below += 1
