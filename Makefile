# The two commands of the README: `make run` and `make test`. Each sets itself up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two installs, each with its stamp. `make run` installs what the running system needs: the four
# services, libs/common, the dev runner (Caddy, the embedded PostgreSQL, the mailbox) and the billing
# stand-in it starts (RUNTIME_PACKAGES). `make test` and the lint, typecheck, contract, deploy and bench
# targets add the test toolchain on top (TEST_EXTRAS: libs/testing, the test-only distribution of the suites' plugin and fixtures, brings pytest, pytest-xdist,
# ruff, mypy and the stubs, schemathesis, playwright, compose, ...; services/console[testing] aiosmtpd
# and axe-core). tools/dev-run/tests/test_runtime_packages.py holds the runtime set free of test tools.
RUNTIME_PACKAGES := -e libs/common -e services/api -e services/webhook-dispatcher -e services/billing-connector \
	-e services/console -e tests/stand-ins/billing-platform -e tools/dev-run
TEST_EXTRAS := -e libs/testing -e services/console[testing]
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed-test
PIP_INSTALL := $(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt
PYTEST := $(BIN)/python -m pytest
# pytest-xdist workers for `make test`: two per core, as its integration and contract tests mostly wait
# (on servers, brokers, timers); `make test-fast`, all computation, has one per core.
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(2 * (os.cpu_count() or 1))')
MYPY_PACKAGES := -p dps_common -p dps_testing -p dps_api -p dps_webhooks -p dps_billing -p dps_console -p dps_billing_stand_in -p dps_dev

.PHONY: run test test-fast tests browser install lint typecheck contract bench bench-webhooks bench-billing clean
.PHONY: compose-env k8s-dev-secrets deploy-check test-scale bench-scaling bench-quotes bench-console bench-history

$(RUN_STAMP): constraints.txt libs/common/pyproject.toml services/api/pyproject.toml services/webhook-dispatcher/pyproject.toml \
		services/billing-connector/pyproject.toml services/console/pyproject.toml tests/stand-ins/billing-platform/pyproject.toml \
		tools/dev-run/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) $(RUNTIME_PACKAGES)
	touch $(RUN_STAMP)

# the test toolchain, on top of the runtime install (redone whenever that one is)
$(STAMP): $(RUN_STAMP) libs/testing/pyproject.toml
	$(PIP_INSTALL) $(TEST_EXTRAS)
	touch $(STAMP)

# everything: the runtime and the test toolchain
install: $(STAMP)

# the runtime packages only (RUNTIME_PACKAGES)
run: $(RUN_STAMP)
	$(BIN)/dealpricing-dev

# Lint, types, then the tests (README "Tests") on TEST_WORKERS workers, one test module per worker at a time
# (--dist loadgroup with the groups of dps_testing.grouping: a module's fixtures stay on one worker,
# and the whole contract suite on one, so its stack is built once).
test: lint typecheck tests

tests: $(STAMP) browser
	$(PYTEST) -n $(TEST_WORKERS) --dist loadgroup

# The tests keep bytecode caches (the gitignored __pycache__, with pytest's rewritten test modules)
# even where the environment says not to write them (PYTHONDONTWRITEBYTECODE): each worker would
# otherwise rewrite and compile every test module again at every run (8 of a worker's 14 s of collection).
tests test-fast: export PYTHONDONTWRITEBYTECODE :=

# The fast part of the tests (README "Tests"): unit and in-process HTTP ones, PostgreSQL only.
test-fast: $(STAMP)
	$(PYTEST) -m "unit or http" -n auto --dist loadgroup

# The browser tests drive Debian's Chromium (Playwright's own download needs the internet): install
# it where apt can, as root; elsewhere those tests skip, and fail under CI=true.
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; } || \
		echo "chromium is not installed: the browser tests will skip (apt-get install chromium)"

lint: $(STAMP)
	$(BIN)/ruff check .

# mypy.ini: strict on libs/common and every domain/ package, the default checks elsewhere.
typecheck: $(STAMP)
	$(BIN)/mypy --cache-dir $(VENV)/.mypy_cache $(MYPY_PACKAGES)

contract: $(STAMP)
	$(BIN)/python -m pytest tests/contract

bench: $(STAMP)
	$(BIN)/python bench/run.py

bench-webhooks: $(STAMP)
	$(BIN)/python bench/webhooks.py

bench-billing: $(STAMP)
	$(BIN)/python bench/billing_push.py

# docker-compose.yml's .env with every secret generated (never overwritten); deploy/README.md
compose-env:
	$(PYTHON) deploy/compose/make_env.py

# the k8s dev overlay's gitignored secrets/*.env (needs DPS_DEV_*_URL: deploy/README.md)
k8s-dev-secrets:
	$(PYTHON) deploy/k8s/overlays/dev/make_secrets.py

# docker-compose.yml, deploy/k8s and deploy/monitoring checked (also part of `make test`): compose
# config (v2), the overlays rendered by kustomize and validated against the Kubernetes schemas,
# routing, policies, the alert rules' and dashboard's PromQL; and, where a developer has made the dev
# overlay's secrets, that they are complete (overlays/dev/check_secrets.py: says what to run if not)
deploy-check: $(STAMP)
	test ! -d deploy/k8s/overlays/dev/secrets || $(PYTHON) deploy/k8s/overlays/dev/check_secrets.py
	$(PYTEST) -p no:xdist tests/deploy

# the scale scenarios alone (also part of `make test`, one xdist group): a three-node RabbitMQ cluster
# losing the node of the events queue's leader, a PostgreSQL primary lost and its standby promoted;
# each starts its private servers and prints its figures (deploy/README.md, "Scale")
test-scale: $(STAMP)
	$(PYTEST) -p no:xdist -m scale tests/scale

bench-scaling: $(STAMP)
	$(BIN)/python bench/scaling.py

# quote sizes: create with 1/50/200/500 lines, read, edit and submit a 500-line quote (bench/README.md)
bench-quotes: $(STAMP)
	$(BIN)/python bench/quotes.py

clean:
	rm -rf $(VENV) .run

# every console page: server time p50/p95 and calls per service, on the demo data (bench/README.md)
bench-console: $(STAMP)
	$(BIN)/python bench/console.py

# the delivery history: purging a day of a million deliveries, batched DELETE vs dropping its partition; inserts before/after
# (bench/README.md). It compares migrations 0004 and 0005 with the dispatcher's own inserts, so it runs on the code
# of their time (the commit before migration 0006 added columns those revisions lack), from a work tree of it.
HISTORY_BENCH_COMMIT := 79f84057^
bench-history: $(STAMP)
	rm -rf .run/bench-history && git worktree prune && mkdir -p .run
	git worktree add --detach .run/bench-history $(HISTORY_BENCH_COMMIT)
	cd .run/bench-history && PYTHONPATH=libs/common/src:$$(ls -d services/*/src | paste -sd:) $(CURDIR)/$(BIN)/python bench/history.py $(ARGS); \
		status=$$?; cd $(CURDIR) && git worktree remove --force .run/bench-history; exit $$status
