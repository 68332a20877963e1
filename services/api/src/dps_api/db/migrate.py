"""Run the api's Alembic migrations programmatically (start-up, tests, ``make run``)."""

from importlib.resources import files

from alembic import command
from alembic.config import Config


def alembic_config(database_url: str) -> Config:
    config = Config(str(files("dps_api") / "alembic.ini"))
    config.set_main_option("script_location", str(files("dps_api") / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)
