"""`make run` as a user starts it: ``make run`` in the repository, in a session of its own (so a
signal to its process group reaches make, the runner and the services, as Ctrl-C in a terminal
does), its output in a file. Every process it started is found by its environment (the run folder
is in DPS_RUN_DIR of each), so a test can tell that none is left, and the fixture kills any that is."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import psutil

from dps_testing.processes import free_port

REPO = Path(__file__).resolve().parents[3]
READY_SECONDS = 300  # a first start: initdb, four services' migrations, the seed, ten processes
STOP_SECONDS = 60
PORTS = ("PORT", "API_PORT", "WEBHOOKS_PORT", "BILLING_PORT", "CONSOLE_PORT", "BILLING_STAND_IN_PORT", "MAILBOX_PORT", "SMTP_PORT")


class MakeRun:
    def __init__(self, run_dir: Path, log_path: Path, **env: str):
        self.run_dir = run_dir
        self.log_path = log_path
        self.env = {
            **os.environ,
            "DPS_RUN_DIR": str(run_dir),
            "WEB_CONCURRENCY": "1",  # one gunicorn worker per service: the same code, less to start
            **{name: str(free_port()) for name in PORTS},
            **env,
        }
        for name in ("DATABASE_URL", "AMQP_URL", "REDIS_URL", "MAKEFLAGS", "MAKELEVEL"):
            if name not in env:
                self.env.pop(name, None)  # a new user's machine: nothing of the test's own servers
        self.make: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0

    def start(self) -> "MakeRun":
        log = open(self.log_path, "ab")
        self.started_at = time.monotonic()
        self.make = subprocess.Popen(
            ["make", "--no-print-directory", "run"], cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        log.close()
        return self

    @property
    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, text: str, seconds: float = READY_SECONDS) -> str:
        assert self.make is not None
        deadline = time.monotonic() + seconds
        while text not in self.output:
            if self.make.poll() is not None:
                raise AssertionError(f"make run exited with {self.make.returncode} before {text!r}:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {text!r} after {seconds} s:\n{self.tail()}")
            time.sleep(0.3)
        return self.output

    def wait_ready(self) -> str:
        """The banner, once every service answered."""
        output = self.wait_for(" In another terminal")
        self.wait_for("=" * 96 + "\n", 10)
        return self.output[output.rindex("Deal Pricing Service is up"):]

    def exports(self) -> str:
        return "\n".join(re.findall(r"^ +(export .*)$", self.wait_ready(), re.MULTILINE))

    def runner(self) -> psutil.Process:
        assert self.make is not None
        [runner] = [p for p in psutil.Process(self.make.pid).children() if "dealpricing-dev" in " ".join(p.cmdline())]
        return runner

    def processes(self) -> list[psutil.Process]:
        """Every process of this run still there: started with its DPS_RUN_DIR, or PostgreSQL on its data folder."""
        found = []
        for process in psutil.process_iter(["cmdline"]):
            try:
                mine = str(self.run_dir) in " ".join(process.info["cmdline"] or ()) or (
                    process.environ().get("DPS_RUN_DIR") == str(self.run_dir)
                )
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            if mine and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        return found

    def wait_gone(self, seconds: float = STOP_SECONDS) -> None:
        deadline = time.monotonic() + seconds
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert not left, f"still running after {seconds} s: {[describe(p) for p in left]}\n{self.tail()}"

    def signal_group(self, signum: int) -> None:
        assert self.make is not None
        os.killpg(self.make.pid, signum)  # the session's leader is make: its group id is its pid

    def kill_everything(self) -> None:
        """Whatever a failed test left: SIGKILL, then reap make."""
        for process in self.processes():
            try:
                process.kill()
            except psutil.Error:
                pass
        if self.make is not None and self.make.poll() is None:
            self.make.kill()
        if self.make is not None:
            self.make.wait(timeout=10)

    def tail(self, lines: int = 60) -> str:
        return "\n".join(self.output.splitlines()[-lines:])


def describe(process: psutil.Process) -> str:
    try:
        return f"{process.pid} {' '.join(process.cmdline())[:160]}"
    except psutil.Error:
        return str(process.pid)


__all__ = ["MakeRun", "REPO", "signal"]
