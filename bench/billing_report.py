"""The billing push bench's table, targets, machine and results file."""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from databases import server_version

if TYPE_CHECKING:
    from billing_push import Measured

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Target:
    name: str
    measured: float
    op: str  # "<=" or ">="
    bound: float
    judged: bool = True  # False: shown for context, no verdict

    @property
    def passed(self) -> bool:
        return self.measured <= self.bound if self.op == "<=" else self.measured >= self.bound

    def line(self) -> str:
        verdict = ("PASS" if self.passed else "MISS") if self.judged else "(info)"
        measured = f"{self.measured:.3f}" if self.measured != int(self.measured) else f"{self.measured:.0f}"
        return f"| {self.name} | {measured} | {self.op} {self.bound:g} | {verdict} |"


def machine(server_url: str) -> dict[str, str]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent).stdout.strip()
    return {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "python": platform.python_version(),
        "kernel": platform.release(),
        "postgres": server_version(server_url),
        "commit": commit or "unknown",
        "load average (1 min) at start": Path("/proc/loadavg").read_text().split()[0],
    }


def _calls(m: Measured) -> str:
    return " / ".join(str(m.calls.get(kind, 0)) for kind in ("products", "prices", "quotes", "token"))


def show(m: Measured, rate: float) -> None:
    floor = m.total / rate
    ratio = f"{m.wall / floor:.3f}" if floor else "-"
    print(f"{m.name}: pushes {dict(m.statuses)}, calls {m.total} (products/prices/quotes/token {_calls(m)}), "
          f"429s {m.refused}, wall {m.wall:.2f} s, floor {floor:.2f} s, wall/floor {ratio}, span {m.span:.2f} s, "
          f"first call after {m.first_call_after:.2f} s, peak {m.peak} in 1 s, margin {m.margin:.0f} ms, "
          f"claims per worker {m.claims}",
          flush=True)


def results_table(results: list[Measured], rate: float) -> list[str]:
    lines = [
        "| run | pushes (status) | calls | products / prices / quotes / token | 429s | wall s | floor s "
        "| wall / floor | calls span s | first call after s | most calls in 1 s | margin ms | pushes claimed per worker |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for m in results:
        floor = m.total / rate
        statuses = ", ".join(f"{n} {s}" for s, n in sorted(m.statuses.items()))
        lines.append(
            f"| {m.name} | {statuses} | {m.total} | {_calls(m)} | {m.refused} | {m.wall:.2f} | {floor:.2f} "
            f"| {m.wall / floor:.3f} | {m.span:.2f} | {m.first_call_after:.2f} | {m.peak} | {m.margin:.0f} | "
            f"{' + '.join(map(str, m.claims))} |" if floor else
            f"| {m.name} | {statuses} | 0 | {_calls(m)} | {m.refused} | {m.wall:.2f} | - | - | - | - | 0 | - | "
            f"{' + '.join(map(str, m.claims))} |"
        )
    return lines


def render(info: dict[str, str], setup: dict[str, str], results: list[Measured], targets: list[Target],
           rate: float) -> str:
    out = [f"# Billing push benchmark, {info['date']}", "", "## Machine", ""]
    out += [f"- {k}: {v}" for k, v in info.items()]
    out += ["", "## Setup", "", *(f"- {k}: {v}" for k, v in setup.items())]
    out += ["", "## Results", "", *results_table(results, rate)]
    errors = [f"- {m.name}: {e}" for m in results for e in m.errors]
    if errors:
        out += ["", "Push errors:", "", *errors]
    out += ["", "## Targets", "", "| target | measured | required | verdict |", "|---|---:|---:|---|"]
    out += [t.line() for t in targets]
    return "\n".join(out) + "\n"


def write(text: str, date: str) -> Path:
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{date[:10]}-billing-push.md"
    path.write_text(text)
    return path
