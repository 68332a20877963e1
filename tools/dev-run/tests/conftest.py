import shutil

import pytest
from make_run import MakeRun


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """One run folder for the module, as a user's .run: the first start makes it all (PostgreSQL's data
    folder, the secrets, the seed), the later ones find it there."""
    if shutil.which("make") is None:
        pytest.fail("make is not installed")
    return tmp_path_factory.mktemp("make-run") / ".run"


@pytest.fixture
def make_run(run_dir, tmp_path):
    started: list[MakeRun] = []

    def start(**env: str) -> MakeRun:
        run = MakeRun(run_dir, tmp_path / f"make-run-{len(started)}.log", **env)
        started.append(run)
        return run.start()

    yield start
    for run in started:
        run.kill_everything()
