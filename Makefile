# The two commands of the README: `make run` and `make test`. Each sets itself up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PACKAGES := -e libs/common[testing] -e services/api[embedded] -e services/webhook-dispatcher
STAMP := $(VENV)/.installed

.PHONY: run test install lint contract bench bench-webhooks clean

$(STAMP): constraints.txt libs/common/pyproject.toml services/api/pyproject.toml services/webhook-dispatcher/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt $(PACKAGES)
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/dealpricing-dev

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .

contract: $(STAMP)
	$(BIN)/python -m pytest tests/contract

bench: $(STAMP)
	$(BIN)/python bench/run.py

bench-webhooks: $(STAMP)
	$(BIN)/python bench/webhooks.py

clean:
	rm -rf $(VENV) .run
