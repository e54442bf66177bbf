# Two commands matter: `make run` (set up and serve locally) and `make test` (set up and test).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= local,aws,llm,cdk,dev,bench,client,mcp,langgraph
STAMP := $(VENV)/.installed
PORT ?= 8080

.PHONY: install run run-aws-local test lint typecheck unit e2e openapi bench bench-mem0-env clean layer synth browser-deps

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch is pinned in the `local` extra: the CPU wheel, not a several-GB CUDA build.
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $(STAMP)

run: install
	PORT=$(PORT) $(PY) -m memory_engine_app.server

# The AWS backend with no account: moto (DynamoDB, SQS) in server mode on MOTO_PORT, the API on PORT.
MOTO_PORT ?= 5000
run-aws-local: install
	PORT=$(PORT) MOTO_PORT=$(MOTO_PORT) $(PY) -m memory_engine_app.aws_local

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: install
	$(PY) -m mypy

test: install lint typecheck browser-deps
	$(PY) -m pytest

unit: install
	$(PY) -m pytest tests/unit tests/contract

e2e: install browser-deps
	$(PY) -m pytest tests/e2e

# The committed OpenAPI document; `make test` fails while it differs from what the handlers describe.
openapi: install
	$(PY) -m memory_engine_app.cli openapi --out docs/openapi.json

# The memory inspector's browser test (tests/e2e/test_inspector_browser.py) drives Debian's chromium
# through chromium-driver; fonts-noto-cjk gives its screenshots Korean glyphs. Installed with
# apt-get when missing (as root); never a browser download at test time.
BROWSER_PACKAGES ?= chromium chromium-driver fonts-noto-cjk

browser-deps:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "The inspector's browser test needs chromium and its driver: run" >&2; \
		echo "  sudo apt-get update && sudo apt-get install -y $(BROWSER_PACKAGES)" >&2; \
		exit 1; \
	fi; \
	apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BROWSER_PACKAGES)

# Speed benchmarks (bench/): each prints a table and saves bench/results/<name>.json.
BENCH_VENV ?= .bench-venv
MEM0_VERSION ?= 2.2.1

bench: install bench-mem0-env
	$(PY) -m bench.embedding
	$(PY) -m bench.retrieve_latency
	$(PY) -m bench.ingest
	$(PY) -m bench.cold_start
	$(PY) -m bench.aws_calls
	$(PY) -m bench.peer_mem0
	$(PY) -m bench.doors

# mem0 for the side-by-side, in its own venv, never the project's. Its HuggingFace embedder needs
# sentence-transformers and torch: a .pth line reads them from the project's venv (same Python).
bench-mem0-env: $(BENCH_VENV)/.installed

$(BENCH_VENV)/.installed: | install
	"$$($(PY) -c 'import sys; print(sys._base_executable)')" -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q 'mem0ai==$(MEM0_VERSION)' 'faiss-cpu>=1.8'
	$(PY) -c "import site; print(site.getsitepackages()[0])" > \
		"$$($(BENCH_VENV)/bin/python -c 'import site; print(site.getsitepackages()[0])')/memory-engine-venv.pth"
	touch $@

clean:
	rm -rf $(VENV) $(BENCH_VENV) .pytest_cache .mypy_cache .ruff_cache

# --- Deployment (infra/): offline, no AWS account, no Docker engine ---
LAYER_DIR ?= build/layer
CONTEXT ?=

# The Lambda layer: memory_engine + runtime deps as Lambda's Linux wheels (pip --platform, no Docker).
layer: install
	$(PY) -m infra.layer $(LAYER_DIR)

# The CloudFormation template(s) in cdk.out/, cdk-nag on. CONTEXT="stage=prod search=es" to vary.
synth: layer
	JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 CDK_OUTDIR=cdk.out $(PY) -m infra.app layerDir=$(LAYER_DIR) $(CONTEXT)

# LoCoMo retrieval benchmark (reads ../shared/data; writes bench/results/locomo_retrieval.{json,png}).
.PHONY: locomo
locomo: install
	$(PY) -m bench.locomo_retrieval
