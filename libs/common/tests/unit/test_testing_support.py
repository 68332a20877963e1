"""The test support (libs/testing) reaches the services only as their users do: the api through its
console script (``dealpricing-admin``, found by its entry point) and over HTTP, never by importing a
service's module; and its JSON log catcher keeps each line as the thread that logged it wrote it."""

from __future__ import annotations

import logging
import threading

import dps_testing
from dps_common import request_id
from dps_testing.json_logs import json_lines
from dps_testing.layers import PackageImports, top_level

SERVICES = {"dps_api", "dps_webhooks", "dps_billing", "dps_console"}


def test_the_test_support_imports_no_service_module():
    imports = PackageImports(dps_testing)
    assert not {
        f"{module} imports {name}" for module in imports.modules for name in imports.direct_imports(module)
        if top_level({name}) & SERVICES
    }


def test_a_line_is_kept_as_the_logging_thread_wrote_it():
    logger = logging.getLogger("dps.tests.json-lines")

    def work() -> None:
        with request_id.bound("req-on-the-thread"):
            logger.info("push claimed", extra={"pushId": "p-1"})
        logger.info("other push", extra={"pushId": "p-2"})

    with json_lines("dps.tests.json-lines") as lines:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    logger.info("after", extra={"pushId": "p-1"})  # no longer caught
    [line] = lines.about(pushId="p-1")
    assert (line["message"], line["requestId"], line["logger"]) == ("push claimed", "req-on-the-thread", "dps.tests.json-lines")
    assert [entry["pushId"] for entry in lines.lines] == ["p-1", "p-2"]


def test_each_test_worker_draws_ports_from_its_own_share(monkeypatch) -> None:
    """Two pytest-xdist workers never give out the same port: their shares of the range are disjoint
    and cover it (a port drawn by two workers at once was bound by one and refused to the other)."""
    from dps_testing import processes

    picks = range(10000, 10400)
    shares = []
    for index in range(4):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{index}")
        monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "4")
        shares.append(set(processes._worker_share(picks)))
    assert set().union(*shares) == set(picks)
    assert sum(len(share) for share in shares) == len(picks)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw2")
    low, high = processes._ephemeral_ports()
    start = processes._LOWEST_PICKED if low - processes._LOWEST_PICKED >= 1000 else high + 1
    assert (processes.free_port() - start) % 4 == 2
