"""A push's lines, a few at once (``dps_billing.services.push_lines``), over fake creating calls and a
recording pacer: turns per kind in line order (lines with stored ids included), at most
``LINES_IN_FLIGHT`` lines in flight, no new turn after a failure and the earliest line's failure
raised, and a call's retries waiting for no other line.

Every wait is bounded. Where a test checks that something does not happen (a later line getting
ahead, an extra line starting), a wrong implementation is given ``GRACE`` to do it; a right one
passes whatever the timing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

import pytest

from dps_billing.adapters.billing_platform.errors import PlatformRejected, PlatformUnavailable
from dps_billing.adapters.billing_platform.pacing import Pacer
from dps_billing.adapters.billing_platform.retry import Retrier, RetryPolicy
from dps_billing.domain.plan import PlannedLine, PriceParams, ProductParams
from dps_billing.services.push_lines import LINES_IN_FLIGHT, Aborted, TurnOrder, TurnTaker, create_lines

ACCOUNT = "acct_lines"
WAIT = 5.0  # seconds: the bound on waiting for what must happen
GRACE = 0.2  # seconds a wrong implementation is given to do what must not happen

Call = tuple[str, int]  # one line's call: its kind ("product" or "price") and the line's position


def planned_line(position: int) -> PlannedLine:
    return PlannedLine(f"line-{position}", ProductParams(f"Product {position}", {}), PriceParams("usd", 100, None))


class RecordingPacer:
    """A plain ``Pacer`` (no ``take_turn``): records whose turn it is."""

    def __init__(self, push: FakePush) -> None:
        self._push = push

    def wait_turn(self, account_id: str) -> None:
        assert account_id == ACCOUNT
        self._push.took_turn()


class RecordingTurnTaker(RecordingPacer):
    """Like the service's pacer: says when the turn is taken, so that turns are taken in the lines' order."""

    def take_turn(self, account_id: str, reserved: Callable[[], None]) -> None:
        self.wait_turn(account_id)
        reserved()


class FakePush:
    """One push's lines as the runner makes them (``PushRunner._create_all``): a price step around a
    product step per line, stored objects skipped, and each create asking its step's pacer before every
    attempt, retried by the platform client's ``Retrier``.

    ``before[call]`` runs as the call arrives, before its first turn; ``attempt[call](n)`` runs as its
    n-th attempt, after the turn, and fails it by raising.
    """

    def __init__(self, lines: int, *, take_turns: bool = True, stored: Iterable[Call] = ()) -> None:
        self.pacer: Pacer = RecordingTurnTaker(self) if take_turns else RecordingPacer(self)
        assert isinstance(self.pacer, TurnTaker) is take_turns
        self.lines = [planned_line(position) for position in range(lines)]
        self.stored = set(stored)
        self.before: dict[Call, Callable[[], None]] = {}
        self.attempt: dict[Call, Callable[[int], None]] = {}
        self.turns: list[Call] = []  # every turn taken, retries included, in the order taken
        self.arrived: set[Call] = set()
        self.created: list[Call] = []
        self.failures: list[Exception] = []  # raised by ``fail``, in the order raised
        self.started: list[int] = []
        self.running = 0
        self.most_running = 0
        self.orders: list[TurnOrder] = []
        self._lock = threading.Lock()
        self._calling = threading.local()  # the call the current thread is making
        self._retrier = Retrier(RetryPolicy(max_attempts=3, base_delay=0.0, max_total=WAIT), sleep=lambda _: None)
        self._thread: threading.Thread | None = None
        self._outcome: list[str] | BaseException | None = None

    # the push, run in a thread so that a line stuck waiting cannot hang the suite

    def start(self) -> FakePush:
        def run() -> None:
            try:
                self._outcome = create_lines(self.lines, self.pacer, self.run_line)
            except BaseException as error:
                self._outcome = error

        self._thread = threading.Thread(target=run, name="push-lines", daemon=True)
        self._thread.start()
        return self

    def outcome(self) -> list[str] | BaseException:
        if self._thread is None:
            self.start()
        assert self._thread is not None
        self._thread.join(WAIT)
        if self._thread.is_alive():
            for order in self.orders:  # free the lines waiting for a turn
                order.abort()
            self._thread.join(WAIT)
            pytest.fail(f"the push did not finish; turns taken: {self.turns}")
        assert self._outcome is not None
        return self._outcome

    def result(self) -> list[str]:
        outcome = self.outcome()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def run_line(self, position: int, line: PlannedLine, order: TurnOrder) -> str:
        assert line is self.lines[position]
        with self._lock:
            if order not in self.orders:
                self.orders.append(order)
            self.started.append(position)
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        try:
            with order.step("price", position) as price_pacer:
                with order.step("product", position) as product_pacer:
                    self._ensure(("product", position), product_pacer)
                return self._ensure(("price", position), price_pacer)
        finally:
            with self._lock:
                self.running -= 1

    def _ensure(self, call: Call, pacer: Pacer) -> str:
        platform_id = f"{call[0]}_{call[1]}"
        if call in self.stored:
            return platform_id
        with self._lock:
            self.arrived.add(call)
        self.before.get(call, lambda: None)()
        attempts = 0

        def attempt() -> str:
            nonlocal attempts
            attempts += 1
            self._calling.call = call
            pacer.wait_turn(ACCOUNT)
            self.attempt.get(call, lambda _: None)(attempts)
            return platform_id

        created = self._retrier.run(attempt)
        with self._lock:
            self.created.append(call)
        return created

    def took_turn(self) -> None:
        with self._lock:
            self.turns.append(self._calling.call)

    # what the tests look at, and wait for

    def positions(self, kind: str) -> list[int]:
        return [position for turn_kind, position in self.turns if turn_kind == kind]

    def aborted(self) -> bool:
        try:
            for order in self.orders:
                order.check()
        except Aborted:
            return True
        return False

    @staticmethod
    def wait_until(condition: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def arrive_after(self, call: Call, others: list[Call]) -> None:
        """``call`` takes its first turn only after ``others`` arrived, and after giving them ``GRACE``
        to take their turns before it."""

        def hook() -> None:
            assert self.wait_until(lambda: set(others) <= self.arrived, WAIT), f"{others} never arrived"
            self.wait_until(lambda: any(turn in others for turn in self.turns), GRACE)

        self.before[call] = hook

    def after_failure(self) -> None:
        """Wait until the push has failed; then go on in any case, to show what a wrong implementation does."""
        self.wait_until(self.aborted, WAIT)

    def fail(self, error: Exception) -> Callable[[int], None]:
        def attempt(_: int) -> None:
            with self._lock:
                self.failures.append(error)
            raise error

        return attempt


@pytest.mark.parametrize("take_turns", [True, False], ids=["turn-taker", "plain-pacer"])
def test_calls_of_each_kind_take_turns_in_line_order(take_turns: bool) -> None:
    push = FakePush(2 * LINES_IN_FLIGHT, take_turns=take_turns)
    # the earlier line's call comes to its turn last: the later ones must wait for it
    push.arrive_after(("product", 0), [("product", 1), ("product", 2), ("product", 3)])
    push.arrive_after(("price", 1), [("price", 2), ("price", 3)])

    assert push.result() == [f"price_{position}" for position in range(2 * LINES_IN_FLIGHT)]
    assert push.positions("product") == list(range(2 * LINES_IN_FLIGHT))
    assert push.positions("price") == list(range(2 * LINES_IN_FLIGHT))


def test_lines_with_stored_ids_give_up_their_place_in_the_order() -> None:
    stored = [("product", 0), ("product", 2), ("price", 1), ("product", 3), ("price", 3)]
    push = FakePush(6, stored=stored)
    push.arrive_after(("product", 1), [("product", 4), ("product", 5)])

    assert push.result() == [f"price_{position}" for position in range(6)]
    assert push.positions("product") == [1, 4, 5]
    assert push.positions("price") == [0, 2, 4, 5]
    assert not set(push.created) & set(stored)


def test_at_most_lines_in_flight_lines_are_under_way_at_once() -> None:
    lines = 2 * LINES_IN_FLIGHT + 1
    push = FakePush(lines)
    release = threading.Event()

    def held(_: int) -> None:  # every line stays in flight until released
        release.wait(WAIT)

    for position in range(lines):
        push.attempt[("product", position)] = held
    push.start()
    try:
        assert push.wait_until(lambda: push.running >= LINES_IN_FLIGHT, WAIT)
        assert not push.wait_until(lambda: push.running > LINES_IN_FLIGHT, GRACE)
        assert sorted(push.started) == list(range(LINES_IN_FLIGHT))
    finally:
        release.set()

    assert push.result() == [f"price_{position}" for position in range(lines)]
    assert push.most_running == LINES_IN_FLIGHT
    assert sorted(push.started) == list(range(lines))


def test_after_a_failure_no_new_turn_is_taken_and_the_failure_is_the_pushs() -> None:
    push = FakePush(2 * LINES_IN_FLIGHT)
    refused = PlatformRejected("No such tax code", status=400, code="resource_missing", param="tax_code")
    push.attempt[("product", 1)] = push.fail(refused)
    for call in [("price", 0), ("product", 2), ("product", 3)]:  # come to their turns once line 1 failed
        push.before[call] = push.after_failure

    assert push.outcome() is refused
    assert push.turns == [("product", 0), ("product", 1)]
    assert push.created == [("product", 0)]  # line 0's call was made before the failure: its id is kept
    assert push.started and max(push.started) < LINES_IN_FLIGHT  # no line starts after the failure


def test_the_earliest_lines_failure_is_raised_even_when_a_later_line_failed_first() -> None:
    push = FakePush(LINES_IN_FLIGHT)
    earlier = PlatformRejected("line 1 refused", status=400, code="parameter_invalid_integer", param="unit_amount")
    later = PlatformRejected("line 3 refused", status=400, code="resource_missing", param="tax_code")
    push.attempt[("product", 3)] = push.fail(later)
    fail_earlier = push.fail(earlier)

    def line_1_product(attempt: int) -> None:  # in flight while line 3 fails; fails after it
        push.after_failure()
        fail_earlier(attempt)

    push.attempt[("product", 1)] = line_1_product
    push.before[("price", 0)] = push.after_failure

    assert push.outcome() is earlier
    assert push.failures == [later, earlier]
    assert push.turns == [("product", 0), ("product", 1), ("product", 2), ("product", 3)]


def test_a_retry_waits_for_no_other_line_and_is_made_after_another_lines_failure() -> None:
    push = FakePush(LINES_IN_FLIGHT)
    refused = PlatformRejected("No such tax code", status=400, code="resource_missing", param="tax_code")
    fail_line_2 = push.fail(refused)

    def line_0_product(attempt: int) -> None:  # its first attempt is answered 429 once line 2 has failed
        if attempt == 1:
            push.after_failure()
            raise PlatformUnavailable("Too many requests", status=429)

    def line_2_product(attempt: int) -> None:
        assert push.wait_until(lambda: ("product", 3) in push.turns, WAIT)
        fail_line_2(attempt)

    push.attempt[("product", 0)] = line_0_product
    push.attempt[("product", 2)] = line_2_product

    assert push.outcome() is refused
    # the retry comes after the later lines' first turns and after line 2 failed, and is still made
    assert push.turns == [("product", 0), ("product", 1), ("product", 2), ("product", 3), ("product", 0)]
    assert sorted(push.created) == [("product", 0), ("product", 1), ("product", 3)]
