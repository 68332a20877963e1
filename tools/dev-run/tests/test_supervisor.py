"""make run's supervisor (``dps_dev.supervisor``) keeps its processes running as the cluster would: one
that exits is started again after a backoff, and says so; only a crash loop stops everything, with the
reason. Real child processes; the first backoff made short."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from dps_dev.supervisor import CRASH_LOOP, CrashLoop, Supervisor

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]
CRASHER = [sys.executable, "-c", "import sys; sys.exit(3)"]


def _until(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the test's bound"
        time.sleep(0.05)


def test_a_killed_process_is_started_again_and_the_supervisor_says_so(capfd):
    supervisor = Supervisor(first_backoff=0.1)
    relay = supervisor.start("outbox relay", SLEEPER, {})
    other = supervisor.start("worker", SLEEPER, {})
    first_pid, other_pid = relay.process.pid, other.process.pid
    stop = threading.Event()
    watching = threading.Thread(target=supervisor.watch, args=(stop,), daemon=True)
    watching.start()
    try:
        relay.process.kill()
        _until(lambda: relay.process.pid != first_pid and relay.process.poll() is None)
        assert other.process.pid == other_pid and other.process.poll() is None  # the rest ran on
    finally:
        stop.set()
        watching.join(5)
        supervisor.stop_all()
    err = capfd.readouterr().err
    assert "make run: outbox relay exited with -9; starting it again in 0.1 s" in err, err
    assert f"make run: outbox relay started again (pid {relay.process.pid})" in err, err


def test_a_crash_loop_stops_with_its_reason(capfd):
    supervisor = Supervisor(first_backoff=0.01)
    supervisor.start("sleeper", SLEEPER, {})
    supervisor.start("crasher", CRASHER, {})
    try:
        with pytest.raises(CrashLoop) as loop:
            supervisor.watch()
    finally:
        supervisor.stop_all()
    assert loop.value.child.name == "crasher"
    assert str(loop.value) == f"crasher exited {CRASH_LOOP} times within 60 s (last with 3): a crash loop"
    assert capfd.readouterr().err.count("make run: crasher exited with 3; starting it again") == CRASH_LOOP - 1
    assert all(child.process.poll() is not None for child in supervisor.children)
