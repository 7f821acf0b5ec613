# inboxflow: `make demo` and `make test` work on a fresh machine with python3 >= 3.11 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format dev bench clean infra-export checkov-venv infra-check source-archive deploy

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

test: $(STAMP) checkov-venv  ## every test; emulator tests start the gcloud emulators when installed
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

# checkov pulls bc-python-hcl2, whose `hcl2` module clashes with python-hcl2: it gets its own venv.
# Best effort: without it the checkov test skips with a notice.
CHECKOV_VENV := .venv-checkov
$(CHECKOV_VENV)/bin/checkov:
	@($(PYTHON) -m venv $(CHECKOV_VENV) && $(CHECKOV_VENV)/bin/python -m pip install --quiet 'checkov==3.3.30') \
	  || echo "notice: could not install checkov; tests/infra will skip the checkov check"

checkov-venv: $(CHECKOV_VENV)/bin/checkov

infra-check: $(STAMP) checkov-venv
	$(BIN)/python -m pytest tests/infra

source-archive: $(STAMP)
	$(BIN)/python -m inboxflow.infra_export archive --out dist/source.zip

deploy:  ## make deploy PROJECT=my-project REGION=europe-west1 ENV=dev
	gcloud builds submit --config cloudbuild.yaml --substitutions=_PROJECT_ID=$(PROJECT),_REGION=$(REGION),_ENV=$(ENV)

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) .inboxflow .pytest_cache dist
