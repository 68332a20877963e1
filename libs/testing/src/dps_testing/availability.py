"""What a test does when something it needs is missing from the machine: it skips and says what to
install or start, except under ``CI=true``, where a missing dependency is a failure, never a skip."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(message: str) -> NoReturn:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
