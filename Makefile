# inboxflow: `make demo` and `make test` work on a fresh machine with python3 >= 3.11 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format dev bench clean infra-export

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "inboxflow needs python3 >= 3.11, found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# The Cloud Tasks emulator pins old Google clients: install it without its dependencies.
	$(BIN)/python -m pip install --quiet --no-deps 'gcloud-tasks-emulator==0.6.2'
	@touch $(STAMP)

demo: $(STAMP)  ## process the bundled sample inbox on the embedded default
	$(BIN)/inboxflow demo

test: $(STAMP)  ## every test; emulator tests start the gcloud emulators when installed
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check shared functions tests bench
	$(BIN)/ruff format --check shared functions tests bench
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format shared functions tests bench
	$(BIN)/ruff check --fix shared functions tests bench

dev: $(STAMP)  ## the emulated cloud: emulators + one functions-framework process per node
	$(BIN)/inboxflow dev

bench: $(STAMP)
	$(BIN)/python bench/runtime.py

infra-export: $(STAMP)
	$(BIN)/inboxflow infra export

clean:
	rm -rf $(VENV) .inboxflow .pytest_cache
