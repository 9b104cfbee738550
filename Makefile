# The two commands for a fresh Debian machine: `make demo` and `make test`.
SHELL := /bin/bash
BUILD ?= build
VENV ?= .venv
PY := $(VENV)/bin/python
NVCC := $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=/usr/bin/python3 \
	$(if $(NVCC),-DCMAKE_CUDA_COMPILER=$(NVCC),)

.PHONY: setup deps models build build-all venv engines llm mcp-client reference demo test test-cpp test-python notebooks clean

setup: deps models build venv engines llm mcp-client

deps:
	@bash scripts/install_deps.sh

models:
	@bash scripts/install_models.sh

# The server engines' drivers (psycopg, PyMySQL) and the SQL gate's parser (sqlglot), pinned, into the venv.
engines: venv
	@bash scripts/install_engines.sh $(PY)

# The local LLM: llama-cpp-python into the venv, the default GGUF model into $RELMEM_HOME/models/llm.
# RELMEM_SKIP_LOCAL_LLM=1 skips it (for users who bring an OpenAI-compatible endpoint).
llm: venv
	@bash scripts/install_llm.sh $(PY)

mcp-client:
	@bash scripts/install_mcp_client.sh

# The tests' reference Python (.venv-ref: torch's CPU build, sentence-transformers), pinned; the tests that need it
# skip where it cannot be installed.
reference:
	@bash scripts/install_reference.sh .venv-ref

# `build` compiles what relmem itself needs (the library and its Python module); `build-all` adds the tests and
# the training executables, which `make test` needs.
build:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 || (cat $(BUILD).configure.log; exit 1)
	@cmake --build $(BUILD) --target _relmem -j $$(nproc)

build-all: build
	@cmake --build $(BUILD) -j $$(nproc)

venv: build
	@test -x $(PY) || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	@test -x $(VENV)/bin/relmem || $(PY) -m pip install --quiet --no-build-isolation --no-deps --no-index -e .
	@# Notebooks started from the venv run their kernel in the venv, where relmem is installed. ipykernel writes the
	@# spec into a temporary folder of its own and leaves that folder behind: it gets one that is removed afterwards.
	@test -f $(VENV)/share/jupyter/kernels/python3/kernel.json || { \
		scratch=$$(mktemp -d) && TMPDIR=$$scratch $(PY) -m ipykernel install --sys-prefix --name python3 \
			--display-name "Python 3 (relmem)" > /dev/null; status=$$?; rm -rf "$$scratch"; exit $$status; }

demo: setup
	@$(VENV)/bin/relmem demo

test: setup reference build-all test-cpp test-python

test-cpp:
	@cd $(BUILD) && ctest --output-on-failure -j $$(nproc)

test-python:
	@RELMEM_BUILD_DIR=$(abspath $(BUILD)) $(PY) -m pytest tests/python -q

# Executes every notebook in place, with its full data, so that the committed notebooks show their outputs (and
# their plots: no MPLBACKEND here, so the kernel's inline backend embeds each figure).
notebooks: setup
	@for nb in notebooks/*.ipynb; do echo "$$nb"; $(PY) -m nbconvert --to notebook \
		--execute --inplace --ExecutePreprocessor.timeout=1800 --ExecutePreprocessor.kernel_name=python3 "$$nb" || exit 1; done

clean:
	rm -rf $(BUILD) $(BUILD).configure.log $(VENV) python/relmem/_relmem*.so
