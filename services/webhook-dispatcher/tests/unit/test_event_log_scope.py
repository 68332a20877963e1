"""The event log's scope, ``events:read``: held by every role and by every console credential (the
settings console acting as its signed-in person, whatever that person's role), and the scope both
``/events`` operations require."""

from uuid import uuid4

import pytest

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import ROLE_SCOPES, Role, Scope

from dps_webhooks.resources.events import EventResource, EventsResource


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("console", [False, True])
def test_every_role_and_every_console_credential_reads_the_event_log(role, console):
    principal = Principal(uuid4(), "Acme", uuid4(), role, "key", console=console)
    assert principal.has(Scope.EVENTS_READ) and Scope.EVENTS_READ in principal.scopes
    assert Scope.EVENTS_READ in ROLE_SCOPES[role]


def test_both_operations_require_it():
    assert EventsResource.operations["GET"].scope is Scope.EVENTS_READ
    assert EventResource.operations["GET"].scope is Scope.EVENTS_READ
