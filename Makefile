# postflows: `make run` runs the demo on the embedded sandbox, `make test` runs the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
USE_UV ?= 1
STAMP := $(VENV)/.installed
PACKAGES := core connectors fileio tasks runtime flows deployments history sandbox postflows

export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1

.PHONY: install run test test-fast check fmt clean bench load docs docs-serve

# uv when it can be had (bootstrapped once into ~/.cache/postflows/tools), else pip; USE_UV=0 forces pip.
$(STAMP): pyproject.toml sandbox/pyproject.toml scripts/install-venv.sh
	PYTHON=$(PYTHON) VENV=$(VENV) USE_UV=$(USE_UV) scripts/install-venv.sh
	@touch $(STAMP)

install: $(STAMP)

run: install
	$(VENV)/bin/postflows demo
	@echo
	@echo "postflows is installed in $(VENV). In this shell: source $(VENV)/bin/activate, then postflows --help;"
	@echo "or call it directly: $(VENV)/bin/postflows --help"

# The test targets keep compiled modules, pytest's rewritten test modules among them, under $(VENV)/pycache,
# even where the environment asks for no bytecode: each worker and each command a test starts then loads them
# instead of compiling every module again (collecting the suite: 4 s instead of 10 per process). The
# benchmarks do too: the commands they time load the project's modules from bytecode, as an installed
# package's are loaded.
test test-fast bench: export PYTHONDONTWRITEBYTECODE :=
test test-fast bench: export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache

# The whole suite (scripts/test-all.sh): the tests of test-fast and the fault matrix over TEST_WORKERS
# processes with every fuzz case, then the end-to-end tests in one process; one throwaway PostgreSQL for both.
test: install
	PY=$(PY) scripts/with-postgres.sh scripts/test-all.sh $(PYTEST_ARGS)

# The inner loop: everything but the end-to-end tests (real servers) and the fault matrix, spread over
# FAST_WORKERS pytest-xdist processes, one more than the CPUs (a flow test spends much of its time waiting for
# its Prefect server and sandbox jobs; each worker starts its own Prefect test server, and every PostgreSQL
# test makes its own database on the one server), with the fuzz suite under the hypothesis profile
# `fuzz-fast`: most fuzz tests generate 10 % of their cases and check 9 % of their minimums
# (tests/fuzz/conftest.py). `make test` (CI) generates every case.
FAST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test-fast: install
	scripts/with-postgres.sh $(PY) -m pytest -n $(FAST_WORKERS) --dist worksteal --hypothesis-profile=fuzz-fast \
		--ignore=tests/e2e --ignore=tests/reliability $(PYTEST_ARGS)

# The documentation site in site/ (strict: a broken link or a page missing from the navigation fails).
docs: install
	$(PY) -m postflows.reference
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# The documentation site served with live reload on http://127.0.0.1:8000 (DOCS_ADDR=host:port).
DOCS_ADDR ?= 127.0.0.1:8000
docs-serve: install
	$(PY) -m postflows.reference
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr $(DOCS_ADDR)

bench: install
	$(PY) -m bench $(BENCH_ARGS)

# The load test of many workers at once (bench/load.py): a Prefect server and the run history on a
# throwaway PostgreSQL, the sandbox served with latency and faults, N process workers; results in
# bench/load-results.json. Smaller: LOAD_ARGS="--workers 2 --runs 20 --out /tmp/load.json".
load: install
	PY=$(PY) scripts/with-postgres.sh $(PY) -m bench.load $(LOAD_ARGS)

check: install
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy $(PACKAGES)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/pylint $(PACKAGES)

fmt: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
