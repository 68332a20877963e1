"""Each test's level marker comes from its folder (dps_testing.levels); a folder without one
fails collection."""

from pathlib import Path

import pytest

from dps_testing.levels import UnknownLevel, level_of

ROOT = Path("/repo")


@pytest.mark.parametrize(("path", "level"), [
    ("services/api/tests/unit/test_pricing.py", "unit"),
    ("services/webhook-dispatcher/tests/http/test_endpoints.py", "http"),
    ("services/billing-connector/tests/integration/test_worker.py", "integration"),
    ("services/console/tests/browser/test_console_sign_in.py", "browser"),
    ("libs/common/tests/unit/test_settings.py", "unit"),
    ("libs/common/tests/http/test_bodies.py", "http"),
    ("libs/common/tests/integration/test_db.py", "integration"),
    ("libs/common/tests/unit/test_pact_key_introspection.py", "unit"),
    ("tests/contract/test_journeys.py", "contract"),
    ("tests/deploy/test_k8s.py", "deploy"),
    ("tools/dev-run/tests/test_quickstart.py", "integration"),
    ("tests/stand-ins/billing-platform/tests/test_oauth.py", "integration"),
    ("services/api/tests/unit/pricing/test_tiers.py", "unit"),
])
def test_a_test_has_the_level_of_its_folder(path: str, level: str) -> None:
    assert level_of(ROOT / path, ROOT) == level


@pytest.mark.parametrize("path", [
    "services/api/tests/test_loose.py",
    "services/api/tests/smoke/test_smoke.py",
    "libs/common/tests/new_folder/test_thing.py",
    "libs/common/tests/test_loose.py",
    "bench/test_bench.py",
])
def test_a_test_in_a_folder_without_a_level_is_refused_by_name(path: str) -> None:
    with pytest.raises(UnknownLevel, match=path):
        level_of(ROOT / path, ROOT)


def test_a_test_outside_the_rootdir_is_not_ours() -> None:
    with pytest.raises(ValueError):
        level_of(Path("/elsewhere/tests/unit/test_x.py"), ROOT)
