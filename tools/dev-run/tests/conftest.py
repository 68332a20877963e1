import shutil
import tempfile
from pathlib import Path

import pytest
from make_run import MakeRun


@pytest.fixture(scope="module")
def run_dir():
    """One run folder for the module, as a user's .run: the first start makes it all (PostgreSQL's data
    folder, the secrets, the seed), the later ones find it there. Not under pytest's own temporary
    folder: as root the server runs as another user, who must reach the folder, and pytest (any run on
    the machine) takes other users' access to its folders away."""
    if shutil.which("make") is None:
        pytest.fail("make is not installed")
    folder = Path(tempfile.mkdtemp(prefix="dps-make-run-"))
    yield folder / ".run"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def first_start(run_dir, tmp_path_factory):
    """The run folder's first ``make run``, running for the tests that only need a running system;
    the module's tests stop it (Ctrl-C) before any later start in the same folder."""
    run = MakeRun(run_dir, tmp_path_factory.mktemp("make-run-first") / "make-run.log").start()
    yield run
    run.kill_everything()


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
