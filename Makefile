# The two commands: `make demo` runs a cities goal on the embedded dev server, `make test` runs
# the checks, the docs build and the tests. `lint`, `typecheck`, `docs`, `format` and `test-unit`
# are its parts (and a fixer); every target creates the virtual environment when it is missing.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
STATE := .harness
GOAL ?= Compare Paris, Tokyo and New York

.PHONY: demo test lint typecheck docs format test-unit screenshot stop clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed; set PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "installing durable-harness and its dependencies into $(VENV) (the first time takes a few minutes; pip shows each package)"
	$(BIN)/python -m pip install --progress-bar on -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m starter.demo "$(GOAL)"

test: $(STAMP) lint typecheck docs
	$(BIN)/pytest -q

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

# The Temporal UI showing a refund that waits for approval, saved to docs/ui-approval-wait.png;
# needs Debian's Chromium (apt-get install chromium) and Playwright (the ui extra).
screenshot: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[ui]'
	$(BIN)/python -m starter.ui_screenshot --out docs/ui-approval-wait.png

stop:
	@$(BIN)/python -m starter.demo --stop 2>/dev/null || echo "nothing to stop"

clean: stop
	rm -rf $(VENV) $(STATE)
