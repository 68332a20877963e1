"""What importing modules loads into a fresh interpreter (``sys.modules`` after each step), for the
runtime view of ``dps_testing.layers``: either one interpreter for one list of modules, or one
interpreter for a tree of branches, each branch forked from the state its parent left, so that what
several branches share (the domain under the use cases, the use cases under their support) is
imported once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

Steps = list[tuple[str, frozenset[str]]]
BEFORE = "(before)"  # the first step of a branch: what its parent had loaded

_STEPS = """
import importlib, json, sys
steps = []
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
    steps.append([name, sorted(sys.modules)])
if sys.argv[2]:
    exec(sys.argv[2], {})
    steps.append(["(built)", sorted(sys.modules)])
print(json.dumps(steps))
"""


def loaded_step_by_step(modules: list[str], build: str = "", env: Mapping[str, str] | None = None) -> Steps:
    """In one fresh interpreter, import ``modules`` in turn, then run ``build``: ``sys.modules`` after
    each step (``"(built)"`` names the build's)."""
    done = subprocess.run(
        [sys.executable, "-c", _STEPS, json.dumps(modules), build],
        capture_output=True, text=True, env={**os.environ, **(env or {})},
    )
    if done.returncode:
        raise AssertionError(f"the fresh interpreter failed:\n{done.stderr}")
    return [(step, frozenset(loaded)) for step, loaded in json.loads(done.stdout.splitlines()[-1])]


def loaded_in_a_fresh_interpreter(*modules: str) -> frozenset[str]:
    """What importing ``modules`` pulls into a fresh interpreter."""
    return loaded_step_by_step(list(modules))[-1][1]


@dataclass(frozen=True)
class Branch:
    """``modules`` imported in turn on top of what the enclosing branch loaded; then each of ``then``."""

    name: str
    modules: tuple[str, ...]
    then: tuple[Branch, ...] = ()

    def plan(self) -> list[object]:
        return [self.name, list(self.modules), [branch.plan() for branch in self.then]]


# Each branch runs in a child forked from its parent's state and reports on a line of its own (a file,
# not stdout: an imported module may print); a branch that fails reports nothing, nor do its own.
_BRANCHES = """
import importlib, json, os, sys

def run(branch, out):
    name, modules, then = branch
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    try:
        steps = [[%r, sorted(sys.modules)]]
        for module in modules:
            importlib.import_module(module)
            steps.append([module, sorted(sys.modules)])
        with open(out, "a") as report:
            report.write(json.dumps([name, steps]) + "\\n")
        for child in then:
            run(child, out)
    finally:
        os._exit(0)

for branch in json.loads(sys.argv[1]):
    run(branch, sys.argv[2])
""" % BEFORE


def loaded_in_branches(branches: Sequence[Branch]) -> dict[str, Steps]:
    """Each branch's steps (the first, ``BEFORE``, is what it started from), all in one fresh
    interpreter; a branch whose import failed is missing (its failure shows in a fresh interpreter
    of its own: ``loaded_step_by_step``)."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "steps.jsonl"
        report.touch()
        subprocess.run(
            [sys.executable, "-c", _BRANCHES, json.dumps([branch.plan() for branch in branches]), str(report)],
            capture_output=True, text=True, check=False,
        )
        lines = report.read_text().splitlines()
    found: dict[str, Steps] = {}
    for line in lines:
        name, steps = json.loads(line)
        found[name] = [(step, frozenset(loaded)) for step, loaded in steps]
    return found
