"""The run's table, the targets with PASS/MISS, the machine, and the results file."""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from load import LoadResult

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Target:
    name: str
    measured: float
    op: str  # ">=", "<=" or "<"
    bound: float
    unit: str = ""
    judged: bool = True  # False: shown for context, no verdict

    @property
    def passed(self) -> bool:
        return {">=": self.measured >= self.bound, "<=": self.measured <= self.bound, "<": self.measured < self.bound}[self.op]

    def line(self) -> str:
        verdict = ("PASS" if self.passed else "MISS") if self.judged else "(info)"
        measured = f"{self.measured:.1f}" if self.unit else f"{self.measured:.3f}"
        return f"| {self.name} | {measured}{self.unit} | {self.op} {self.bound:g}{self.unit} | {verdict} |"


def load_average() -> str:
    """The 1-minute load average: other work on the machine moves every number here."""
    return Path("/proc/loadavg").read_text().split()[0]


def machine() -> dict[str, str]:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
        "unknown",
    )
    mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
    wrk = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.splitlines()
    return {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "python": platform.python_version(),
        "kernel": platform.release(),
        "wrk": wrk[0].split("[")[0].strip() if wrk else "unknown",
    }


def results_table(rows: list[tuple[str, str, LoadResult]]) -> list[str]:
    lines = [
        "| target | request | requests/s | p50 ms | p99 ms | requests | server CPU µs/req |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, request, r in rows:
        lines.append(
            f"| {name} | `{request}` | {r.rps:,.0f} | {r.p50_ms:.2f} | {r.p99_ms:.2f} | {r.requests:,} | {r.cpu_us:.0f} |"
        )
    return lines


def targets_table(targets: list[Target]) -> list[str]:
    return ["| target | measured | required | verdict |", "|---|---:|---:|---|", *(t.line() for t in targets)]


def render(info: dict[str, str], setup: dict[str, str], rows, targets: list[Target], notes: list[str],
           gc_lines: list[str] = (), sections: list[tuple[str, list[str]]] = ()) -> str:
    out = [f"# Benchmark run {info['date']}", "", "## Machine", ""]
    out += [f"- {k}: {v}" for k, v in info.items()]
    out += ["", "## Setup", ""]
    out += [f"- {k}: {v}" for k, v in setup.items()]
    out += ["", "## Results", "", *results_table(rows), "", "## Targets", "", *targets_table(targets)]
    for title, lines in sections:
        out += ["", f"## {title}", "", *lines]
    if gc_lines:
        out += ["", "## Garbage collections during the measurements (all rounds; each one stops its worker)", "", *gc_lines]
    if notes:
        out += ["", "## Notes", "", *(f"- {n}" for n in notes)]
    return "\n".join(out) + "\n"


def write(text: str, date: str) -> Path:
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{date[:10]}.md"
    path.write_text(text)
    return path
