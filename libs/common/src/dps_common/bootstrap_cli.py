"""The start of a service's command line (``dealpricing-webhooks``, ``-billing``, ``-console``), the
same in each: ``migrate`` applies the service's migrations to DATABASE_URL and needs nothing else;
every other command reads the whole configuration first and exits 2 naming every problem in it."""

from __future__ import annotations

import sys
from collections.abc import Callable

from dps_common.bootstrap import SettingsT, start_process
from dps_common.migrations import upgrade_from_env
from dps_common.settings import SettingsError

EXIT_CONFIGURATION = 2


def run_command(
    command: str, package: str, read_settings: Callable[[], SettingsT], run: Callable[[SettingsT], int], *,
    service: str, process: str,
) -> int:
    """``command`` as parsed; ``package`` holds the migrations; ``run`` the command, once the settings
    are read and the logs configured (``process`` names it in them). Returns the exit status."""
    try:
        if command == "migrate":
            upgrade_from_env(package)
            return 0
        settings = start_process(read_settings, service, process)
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return EXIT_CONFIGURATION
    return run(settings)
