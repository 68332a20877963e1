"""dealpricing-admin's settings: the environment's, else a running make run's (.run/admin.env), found
from this folder or a parent or DPS_RUN_DIR; otherwise one message saying exactly what to set."""

import os

import pytest

from dps_common.settings import SettingsError

from dps_api.cli.settings import AdminSettings, make_run_file

PEPPER = "p" * 40


def write_run(folder, url="postgresql://postgres@/dps_api?host=/tmp/x"):
    run = folder / ".run"
    run.mkdir(parents=True)
    (run / "admin.env").write_text(f"# make run's\nDATABASE_URL={url}\nAPI_KEY_PEPPER={PEPPER}\n")
    return run / "admin.env"


def test_without_database_url_a_running_make_run_is_found_from_a_subfolder(tmp_path, monkeypatch, capsys):
    found = write_run(tmp_path)
    (tmp_path / "services" / "api").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "services" / "api")
    settings = AdminSettings.from_env({})
    assert (settings.database_url, settings.api_key_pepper) == ("postgresql://postgres@/dps_api?host=/tmp/x", PEPPER.encode())
    assert f"using make run's database and pepper from {found}" in capsys.readouterr().err


def test_dps_run_dir_names_the_run_and_the_environment_wins(tmp_path, monkeypatch):
    found = write_run(tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path)
    assert make_run_file({"DPS_RUN_DIR": str(found.parent)}) == found
    other_pepper = "q" * 40
    settings = AdminSettings.from_env({"DPS_RUN_DIR": str(found.parent), "API_KEY_PEPPER": other_pepper})
    assert settings.api_key_pepper == other_pepper.encode()
    assert AdminSettings.from_env({"DATABASE_URL": "postgresql://u@h/db", "API_KEY_PEPPER": PEPPER}).database_url == (
        "postgresql://u@h/db"
    )


def test_without_either_the_message_says_how(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not (tmp_path / ".run").exists() and os.getcwd() == str(tmp_path)
    with pytest.raises(SettingsError, match=r"DATABASE_URL is required.*Set DATABASE_URL and API_KEY_PEPPER .*make run"):
        AdminSettings.from_env({})
