"""A consumer's side of a Pact contract: its interactions recorded by a test module and compared with
the committed pact file (``pacts/<consumer>-<provider>.json``, verified by the provider's suite).

Each interaction a run records must be in the committed file as recorded (``-k`` may select some):
what a consumer reads changed until ``PACT_WRITE=1 pytest <module>`` rewrites the file (run the whole
module: the file holds what the run recorded) and it is committed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pact import Pact

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
