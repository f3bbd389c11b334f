# The two commands: `make demo` runs a cities goal on the embedded dev server, `make test` runs
# the checks and the tests. Both create the virtual environment when it is missing.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
STATE := .harness
GOAL ?= Compare Paris, Tokyo and New York

.PHONY: demo test lint typecheck stop server worker clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed; set PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m starter.demo "$(GOAL)"

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -q

stop:
	@$(BIN)/python -m starter.demo --stop 2>/dev/null || echo "nothing to stop"

clean: stop
	rm -rf $(VENV) $(STATE)
