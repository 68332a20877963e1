"""How ``make run`` is asked to stop: Ctrl-C (SIGINT to the terminal's process group), SIGTERM to the
``make run`` process group or to one process, SIGHUP when the terminal goes away.

The first signal interrupts whatever the runner is doing (``StopRequested``, raised in the main
thread like ``KeyboardInterrupt``) and the runner unwinds: its ``finally`` blocks stop the services,
then PostgreSQL. Every later signal is only noted: ``make`` forwards its own SIGTERM to the runner,
so a SIGTERM to the group arrives twice, and the second must not cut the clean-up short (it used to
kill the runner with the embedded PostgreSQL still running)."""

from __future__ import annotations

import signal
import sys
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRequested(BaseException):
    """A stop signal arrived (a BaseException, like KeyboardInterrupt: ``except Exception`` lets it through)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopSignals:
    def __init__(self) -> None:
        self.stopping = False

    def install(self) -> None:
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._handle)

    def begin_stop(self) -> None:
        """From here on, signals change nothing: the stop under way runs to its end."""
        self.stopping = True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.stopping:
            print(f"({signal.Signals(signum).name}: already stopping)", file=sys.stderr, flush=True)
            return
        self.stopping = True
        raise StopRequested(signum)
