"""The outbox adapter renders every event the catalogue declares, and a write's answer is the data
of the events it recorded (rendered once)."""

from __future__ import annotations

from dps_api.adapters.outbox import RENDERERS
from dps_api.domain.events import Change, RecordedEvents
from dps_api.schemas.events import EVENTS, render_change


def test_every_declared_event_has_a_renderer_for_its_data_and_no_renderer_is_left_over():
    schemas = {event.data for event in EVENTS}
    assert schemas == set(RENDERERS)


def test_a_change_answers_with_its_events_data_and_renders_only_what_recorded_nothing():
    data = {"id": "x"}
    recorded = Change("view", RecordedEvents(("quote.updated",), data))
    assert render_change(recorded, lambda view: {"rendered": view}) is data
    assert render_change(Change("view", None), lambda view: {"rendered": view}) == {"rendered": "view"}
