"""The dispatcher's schema changes only through its Alembic tree: the migrated schema is exactly the
models, constraint names follow the convention once, and the chain goes down to nothing and up
again. The checks are the plugin's, the same for every service."""

from dps_testing.migrations import assert_round_trip, assert_schema_matches_models, misnamed_constraints


def test_migrated_schema_matches_the_models(engine, dps_service):
    assert_schema_matches_models(engine, dps_service.metadata)


def test_constraint_names_follow_the_naming_convention_once(engine):
    assert misnamed_constraints(engine) == []


def test_the_chain_downgrades_to_nothing_and_upgrades_again(dps_service):
    assert_round_trip(dps_service.package, dps_service.metadata)
