"""The pytest-xdist groups of ``dps_testing.grouping``: a folder whose modules share a session-scoped
stack is one group (built once per run), any other test is grouped by its module."""

from types import SimpleNamespace

import pytest

from dps_testing.grouping import group_of


@pytest.mark.parametrize(
    ("nodeid", "group"),
    [
        ("tests/contract/test_s4_endpoints.py::test_x[a]", "contract"),
        ("tests/contract/journeys/test_deep.py::test_x", "contract"),
        ("services/console/tests/integration/test_console_pages.py::test_x", "console-api"),
        ("services/console/tests/browser/test_console_in_browser.py::test_x", "console-api"),
        ("services/console/tests/integration/test_console_server.py::test_x", "console-api"),
        ("services/console/tests/unit/test_console_rules.py::test_x", "services/console/tests/unit/test_console_rules.py"),
        ("services/api/tests/http/test_quotes.py::TestQuotes::test_x", "services/api/tests/http/test_quotes.py"),
        ("tests/contractual/test_x.py::test_x", "tests/contractual/test_x.py"),
    ],
)
def test_a_shared_stacks_folder_is_one_group_any_other_test_its_module(nodeid: str, group: str) -> None:
    assert group_of(SimpleNamespace(nodeid=nodeid)) == group  # type: ignore[arg-type]
