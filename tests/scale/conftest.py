"""The scale scenarios (issue 28): each starts its private servers (or, for two of every process,
make run's runner on fresh databases of the machine's), drives the services as a deployment runs them
and prints its figures at the end of the run."""

from __future__ import annotations

import pytest
from scale_stack import Figures

FIGURES = Figures()


@pytest.fixture(scope="session")
def figures() -> Figures:
    return FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FIGURES.rows:
        terminalreporter.section("scale figures")
        for line in FIGURES.lines():
            terminalreporter.write_line(line)
