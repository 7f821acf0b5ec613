# inboxflow: `make demo` and `make test` work on a fresh machine with python3 >= 3.11 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format dev bench clean infra-export checkov-venv infra-check source-archive deploy mutate

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
	$(BIN)/lint-imports

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
	$(BIN)/python -m inboxflow.dev.infra.archive --out dist/source.zip

# The build runs in the target project and region, stages its source in the
# bootstrap's bucket in that region (the default gs://PROJECT_cloudbuild is a
# US multi-region bucket), and reads the target's Terraform state.
deploy:  ## make deploy PROJECT=my-project REGION=europe-west1 ENV=dev
	@test -n "$(PROJECT)" -a -n "$(REGION)" -a -n "$(ENV)" || \
	  { echo "make deploy needs PROJECT, REGION and ENV, e.g. make deploy PROJECT=my-project REGION=europe-west1 ENV=dev" >&2; exit 2; }
	gcloud builds submit --config cloudbuild.yaml --project=$(PROJECT) --region=$(REGION) \
	  --gcs-source-staging-dir=gs://$(PROJECT)-build-staging/source \
	  --service-account=projects/$(PROJECT)/serviceAccounts/ibx-deployer@$(PROJECT).iam.gserviceaccount.com \
	  --substitutions=_PROJECT_ID=$(PROJECT),_REGION=$(REGION),_ENV=$(ENV),_TF_STATE_BUCKET=$(PROJECT)-tfstate

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) .inboxflow .pytest_cache dist $(MUTATE_DIR)

# --- mutation testing (not part of `make test`) ------------------------------------------------
# mutmut over the modules that carry the promises, run on the fast suites. mutmut expects the
# package under src/, so the run happens in a copy ($(MUTATE_DIR)) where shared/ is src/.
# Adjust the module list (paths under shared/inboxflow/) and the tests here, in one place:
#   make mutate MUTATE_MODULES="runtime.py" MUTATE_TESTS="tests/unit/test_runtime.py"
MUTATE_MODULES ?= runtime.py approvals/decisions.py approvals/tokens.py approvals/deadlines.py \
                  approvals/records.py graphs/pipeline/nodes/review.py \
                  graphs/pipeline/nodes/dispatch.py mail/loop_guard.py
MUTATE_TESTS ?= tests/unit tests/functions tests/contract  # run with -m "not emulator"
MUTATE_DIR ?= .mutate
MUTATE_JOBS ?= 2

mutate: $(STAMP)  ## mutation score of the promise-carrying modules (slow; results in $(MUTATE_DIR))
	rm -rf $(MUTATE_DIR) && mkdir -p $(MUTATE_DIR)/src
	tar -c --exclude=./.git --exclude=./.venv --exclude=./.venv-checkov --exclude=./shared \
	  --exclude=./$(MUTATE_DIR) --exclude=./.inboxflow --exclude='__pycache__' . | tar -x -C $(MUTATE_DIR)
	cp -r shared/inboxflow $(MUTATE_DIR)/src/inboxflow
	cd $(MUTATE_DIR) && { echo '[mutmut]'; echo 'source_paths=src'; echo 'only_mutate='; \
	  for m in $(MUTATE_MODULES); do echo "    src/inboxflow/$$m"; done; \
	  echo 'also_copy='; for f in *; do [ "$$f" = src ] || echo "    $$f"; done; \
	  echo 'pytest_add_cli_args_test_selection='; \
	  for t in $(MUTATE_TESTS); do echo "    $$t"; done; \
	  echo 'pytest_add_cli_args='; echo '    -p'; echo '    no:cacheprovider'; \
	  echo '    -m'; echo '    not emulator'; } > setup.cfg
	cd $(MUTATE_DIR) && ../$(BIN)/mutmut run --max-children $(MUTATE_JOBS); \
	  ../$(BIN)/mutmut export-cicd-stats >/dev/null && ../$(BIN)/python -c 'import json; \
	  s = json.load(open("mutants/mutmut-cicd-stats.json")); \
	  tested = s["total"] - s["skipped"] - s["no_tests"]; caught = s["killed"] + s["timeout"]; \
	  print("mutation score: %d/%d killed or timed out (%.1f%%); %s" % (caught, tested, 100.0 * caught / max(tested, 1), s))'
