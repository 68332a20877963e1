"""The console's Alembic tree: the models' schema exactly, constraints named by the convention, and
down to nothing and up again."""

from dps_testing.migrations import assert_round_trip, assert_schema_matches_models, misnamed_constraints


def test_the_migrated_schema_is_the_models(engine, dps_service):
    assert_schema_matches_models(engine, dps_service.metadata)
    assert misnamed_constraints(engine) == []


def test_migrations_go_down_to_nothing_and_up_again(dps_service):
    assert_round_trip(dps_service.package, dps_service.metadata)
