"""A consumer's side of a Pact contract: its interactions recorded by a test module and compared with
the committed pact file (``pacts/<consumer>-<provider>.json``, verified by the provider's suite);
and what the providers' verifiers share: a real server, the provider-state endpoint, an event as the
outbox relay publishes it.

Each interaction a run records must be in the committed file as recorded (``-k`` may select some):
what a consumer reads changed until ``PACT_WRITE=1 pytest <module>`` rewrites the file (run the whole
module: the file holds what the run recorded) and it is committed."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest
from pact import Pact, Verifier, generate, match
from pact.match.matcher import AndMatcher, GenericMatcher
from pact.types import Message
from sqlalchemy.orm import Session

from dps_common.outbox.relay.batches import claim_unpublished

PACTS = next(p for p in Path(__file__).resolve().parents if (p / "pacts").is_dir()) / "pacts"


class ConsumerContract:
    def __init__(self, consumer: str, provider: str = "api"):
        self.consumer = consumer
        self.provider = provider
        self.file = PACTS / f"{consumer}-{provider}.json"

    def recorded(self, written: Path) -> Iterator[Path]:
        """A module fixture's body: the folder the module's interactions are written to; at the end,
        each is checked against the committed pact (or, with ``PACT_WRITE``, the file is rewritten)."""
        yield written
        recorded = json.loads((written / self.file.name).read_text())
        if os.environ.get("PACT_WRITE"):
            self.file.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
        committed = json.loads(self.file.read_text())["interactions"]
        changed = [i["description"] for i in recorded["interactions"] if i not in committed]
        assert not changed, (
            f"{changed}: what {self.consumer} reads changed: rewrite {self.file} with PACT_WRITE=1 and commit it"
        )

    def pact(self, written: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pact]:
        """A test fixture's body: a V4 pact whose interactions join the module's at the end."""
        monkeypatch.setenv("PACT_DO_NOT_TRACK", "true")  # the pact core's usage report: no call out of the tests
        pact = Pact(self.consumer, self.provider).with_specification("V4")
        yield pact
        pact.write_file(written)

    def fixtures(self, name: str = "pact") -> tuple[Any, Any]:
        """A consumer module's two fixtures, assigned at its top (``pact_recorded, pact =
        CONTRACT.fixtures()``): the module's folder (``recorded``) and each test's pact, named ``name``
        (a module with two contracts names them apart)."""
        folder = f"{name}_recorded"

        @pytest.fixture(scope="module", name=folder)
        def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
            yield from self.recorded(tmp_path_factory.mktemp("pacts"))

        @pytest.fixture(name=name)
        def pact(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pact]:
            yield from self.pact(request.getfixturevalue(folder), monkeypatch)

        return recorded, pact


# money and quantities: decimal strings, never JSON numbers (a float loses digits)
DECIMAL = r"^-?\d+(\.\d+)?$"


class _Both(AndMatcher[str]):
    """pact-python's ``a & b`` with the example kept: its AndMatcher gives the mock server no value,
    which then answers ``null`` in its place."""

    def __init__(self, example: str, *matchers: Any):
        super().__init__(*matchers)
        self.example = example

    def to_integration_json(self) -> dict[str, Any]:
        return {**super().to_integration_json(), "value": self.example}


def text(example: str, regex: str) -> AndMatcher[str]:
    """A string matching ``regex``. A regex alone is matched against a value's text, so it would pass
    the JSON number 3 for ``^[0-9]+$``: the type is matched too."""
    return _Both(example, match.str(example), match.regex(example, regex=regex))


def decimal_string(example: str) -> AndMatcher[str]:
    """A decimal as a string (``"270.00"``): ``270`` or ``270.0`` from the provider fails verification."""
    return text(example, DECIMAL)


def from_state(example: str, regex: str, expression: str) -> GenericMatcher[str]:
    """A value the provider state makes (``${endpointId}`` in ``expression``), put in the request by
    the verifier; ``example`` is what the consumer's test sends."""
    return GenericMatcher("regex", example, regex=regex, generator=generate.provider_state(expression))


# --- the consumers' side of the event contracts -------------------------------------------------

EVENT_ID = "00000000-0000-4000-8000-000000000009"
EVENT_ORG = "00000000-0000-4000-8000-000000000002"
OCCURRED_AT = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"
REQUEST_ID = r"^[A-Za-z0-9._:-]{1,128}$"  # dps_common.request_id's well-formed ids


def event_envelope(event_type: str, data: Any = None) -> dict[str, Any]:
    """An event envelope (``dps_common.events.envelope``) as a consumer reads it: ``data`` is what it
    reads of the event's data (default: nothing, the object passed on as is)."""
    return {
        "id": match.uuid(EVENT_ID),
        "type": event_type,
        "version": match.int(1),
        "occurredAt": match.regex("2027-01-01T10:00:00.123456Z", regex=OCCURRED_AT),
        "organizationId": match.uuid(EVENT_ORG),
        "data": match.type({}) if data is None else data,
    }


def request_id_header(example: str = "0123456789abcdef0123456789abcdef") -> dict[str, Any]:
    """The message header the relay publishes with an event a request caused (``X-Request-Id``)."""
    return {"X-Request-Id": text(example, REQUEST_ID)}


# --- the providers' side: real servers, provider states, outbox messages ------------------------

State = Callable[[dict[str, Any]], dict[str, str]]


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def served(app: Any) -> Iterator[str]:
    """A WSGI app on a free loopback port, one request at a time (a test's one database connection:
    the verifier waits for each answer)."""
    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def state_changes(states: dict[str, State]) -> Any:
    """The provider-state endpoint the verifier posts to (``{"state", "params", "action"}``): a setup
    answers the values the interaction's generators read (``${quoteId}``); teardowns are not asked for
    (each state makes the world it names, on rows the test rolls back or owns alone)."""

    def application(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        body = json.loads(environ["wsgi.input"].read(size) or b"{}")
        values: dict[str, str] = {}
        if body.get("action", "setup") == "setup":
            values = states[body["state"]](body.get("params") or {})
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(values).encode()]

    return application


def verify_http(provider: str, consumer: str, provider_url: str, state_url: str, headers: dict[str, str]) -> None:
    """Replays ``pacts/<consumer>-<provider>.json`` against the provider's server; ``headers`` replace
    the recorded ones (the provider's own credentials)."""
    verifier = (
        Verifier(provider, host="127.0.0.1")
        .add_transport(url=provider_url)
        .add_source(PACTS / f"{consumer}-{provider}.json")
        .state_handler(state_url, body=True)
        .set_error_on_empty_pact(enabled=True)
    )
    for name, value in headers.items():
        verifier.add_custom_header(name, value)
    _verified(verifier, provider, consumer)


def verify_messages(provider: str, consumer: str, messages: dict[str, Callable[[], Message]]) -> None:
    """Checks each message of ``pacts/<consumer>-<provider>.json`` (by description) against the one
    the provider makes."""
    verifier = (
        Verifier(provider, host="127.0.0.1")
        .message_handler({description: make for description, make in messages.items()})
        .add_source(PACTS / f"{consumer}-{provider}.json")
        .set_error_on_empty_pact(enabled=True)
    )
    _verified(verifier, provider, consumer)


def _verified(verifier: Verifier, provider: str, consumer: str) -> None:
    try:
        verifier.verify()
    except RuntimeError:
        pytest.fail(f"{consumer}'s pact is broken by the {provider}:\n{verifier.output(strip_ansi=True)}")


def outbox_message(session: Session, organization_id: object, event_type: str) -> Message:
    """An event as the outbox relay publishes it: the body it claims (the envelope as stored), the
    headers it sends with it and the routing key (``routingKey``); the oldest of its type for the
    organization."""
    for event in claim_unpublished(session, 10_000).events:
        body = event.body.encode() if isinstance(event.body, str) else event.body
        # .get: another test of the same database may leave a bare row of that type
        if event.type == event_type and json.loads(body).get("organizationId") == str(organization_id):
            metadata = {**(event.headers or {}), "routingKey": event.routing_key or event.type}
            return {"contents": body, "metadata": metadata, "content_type": "application/json"}
    raise LookupError(f"no {event_type} event in the outbox of {organization_id}")


def outbox_messages(
    transaction: Callable[[], AbstractContextManager[Session]], organization_id: object, event_types: Iterable[str]
) -> dict[str, Callable[[], Message]]:
    """``verify_messages``' handlers for the interactions ``a <type> event`` of a message pact: each
    makes its event from the organization's outbox, in a ``transaction()`` of its own."""

    def message(event_type: str) -> Callable[[], Message]:
        def make() -> Message:
            with transaction() as session:  # the claim's locks end with it: nothing changes
                return outbox_message(session, organization_id, event_type)

        return make

    return {f"a {event_type} event": message(event_type) for event_type in event_types}
