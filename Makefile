# gpuwise — the two commands in the README's Quickstart:
#   make run    install into .venv and run `gpuwise doctor` on this machine
#   make test   install system tools + Python deps into .venv, lint (ruff, import layers), build the docs
#               site (mkdocs --strict), run the tests
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test install system-deps skypilot-venv lint clean catalogs messages docs schemas

$(BIN)/python:
	$(PY) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/pip install -q -e .
	$(MAKE) catalogs

# translations: the .po files are the source (committed); the .mo files are built here (gpuwise.i18n
# compiles a .po in memory when its .mo is missing or older, e.g. after a plain `pip install -e .`)
LOCALE := src/gpuwise/locale
catalogs:
	$(BIN)/pybabel compile -D gpuwise -d $(LOCALE) --statistics

# after changing user-facing text: extract every _() / N_() message and merge it into each .po
messages:
	$(BIN)/pybabel extract -F babel.cfg -k N_ -k C_:1c,2 -k msg -k cmsg:1c,2 --no-location --add-comments=TRANSLATORS: \
		--project=gpuwise --msgid-bugs-address=- -o $(LOCALE)/gpuwise.pot src/gpuwise
	$(BIN)/pybabel update -D gpuwise -i $(LOCALE)/gpuwise.pot -d $(LOCALE) --no-fuzzy-matching --ignore-obsolete

# after changing a model in src/gpuwise/documents/: regenerate the checked-in JSON Schema of each document
schemas:
	$(BIN)/python -m gpuwise.documents.schemas

# doctor exits 1 (warnings) or 2 (critical findings) after a complete run; only 3 means it could not run
run: install
	$(BIN)/gpuwise doctor || [ $$? -le 2 ]

system-deps:
	bash scripts/install-system-deps.sh

# SkyPilot (the launch tests validate task YAML with its own parser) pins click<8.2, which import-linter's
# click>=8.2 cannot share: it gets its own venv, and the tests call it there.
SKY_VENV ?= .venv-skypilot
skypilot-venv:
	[ -x $(SKY_VENV)/bin/python ] || $(PY) -m venv $(SKY_VENV)
	$(SKY_VENV)/bin/pip install -q 'skypilot>=0.14,<0.15'

# torch is pinned to the CPU build (2.13.0) for tests, so no multi-GB CUDA build is pulled in.
test: system-deps skypilot-venv $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,bench,tencent,cn-clouds,tune,stability,docs]'
	$(MAKE) catalogs
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports
	$(MAKE) docs
	$(BIN)/pytest -q

# the documentation site: a broken link, a page missing from docs/ or a missing anchor fails (--strict);
# the site goes to build/site (git-ignored). Installs the `docs` extra if missing; the build needs no network.
docs: $(BIN)/python
	[ -x $(BIN)/mkdocs ] || $(BIN)/pip install -q -e '.[docs]'
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir build/site

lint: $(BIN)/python
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports

clean:
	rm -rf build/site $(VENV) $(SKY_VENV) $(LOCALE)/*/LC_MESSAGES/*.mo .pytest_cache .ruff_cache .hypothesis .import_linter_cache
