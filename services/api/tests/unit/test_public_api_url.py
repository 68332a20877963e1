"""PUBLIC_API_URL: the document's ``servers`` entry (where clients reach the whole API: the ingress,
make run's proxy); unset, the relative base; anything but an http(s) URL ending in /external/v1 is
refused at start."""

import pytest

from dps_common.settings import SettingsError

from dps_api.settings import Settings

REQUIRED = {"DATABASE_URL": "postgresql://u@h/db", "API_KEY_PEPPER": "p" * 40, "CURSOR_SECRET": "c" * 40}


def test_unset_it_is_the_relative_base():
    assert Settings.from_env(REQUIRED).public_api_url == "/external/v1"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/external/v1", "https://api.example.com/external/v1/"])
def test_an_absolute_base_is_kept_without_its_trailing_slash(url):
    assert Settings.from_env({**REQUIRED, "PUBLIC_API_URL": url}).public_api_url == url.rstrip("/")


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080", "ftp://h/external/v1", "127.0.0.1:8080/external/v1",
                                 "https://h/external/v2", "https://h/external/v1?x=1"])
def test_anything_else_is_refused(url):
    with pytest.raises(SettingsError, match="PUBLIC_API_URL must be an http"):
        Settings.from_env({**REQUIRED, "PUBLIC_API_URL": url})
