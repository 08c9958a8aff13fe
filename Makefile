# ktop: the two commands are `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
ARGS ?= --scenario zone-outage --speed 5

.PHONY: setup demo test check docs unit e2e controlplane snapshots recordings bench soak clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## setup: create .venv with ktop and its test tools
setup: $(STAMP)

## demo: set up and run `ktop demo` (override with ARGS="--scenario steady")
demo: setup
	$(BIN)/ktop demo $(ARGS)

## test: set up and run the whole suite (lint, types, layering, unit, UI, e2e)
test: setup
	bash scripts/run-tests.sh

## check: lint, format, types and layering only
check: setup
	bash scripts/run-tests.sh --check-only

## docs: rewrite every generated block of docs/*.md and README.md (ktop/docgen.py) from the
## code and the saved benchmark results; the unit tests check that they are current
docs: setup
	$(BIN)/python -m ktop.docgen

## controlplane: build or reuse the real control-plane components for e2e tests
controlplane:
	bash scripts/controlplane/install.sh

## snapshots: regenerate the SVG snapshots after an intended UI change
snapshots: setup
	$(BIN)/pytest tests/functional --snapshot-update -q

## recordings: regenerate recordings/ (one small recording per simulator scenario)
recordings: setup
	bash scripts/make-recordings.sh

## bench: the scale benchmark against the local control plane (not part of `make test`;
## tables go to docs/benchmarks.md and docs/cost.md). BENCH_ARGS="--nodes 50000 100000"
BENCH_ARGS ?= --nodes 1000 10000
bench: setup
	$(BIN)/python -m benchmarks.scale run $(BENCH_ARGS)

## soak: ktop's UI for an hour against the churning local control plane, memory every
## minute (not part of `make test`; its section of docs/benchmarks.md is written even when
## the verdict fails, and the exit status says so)
SOAK_ARGS ?= --minutes 60 --nodes 500
soak: setup
	$(BIN)/python -m benchmarks.soak $(SOAK_ARGS) --out benchmarks/results/soak.json; \
	status=$$?; $(BIN)/python -m benchmarks.soak --docs --out benchmarks/results/soak.json; \
	exit $$status

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
