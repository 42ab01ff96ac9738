# Two commands on a fresh machine (Python 3.11):
#   make run [DATA=path]  — create .venv, install kweval, start the dashboard on DATA (default: the embedded demo)
#   make test             — create .venv, install kweval + test tools (+ Debian chromium for the browser test), run every test
#   make test-quick       — the same without the slow and browser tests (a minute or two)
#   make lint             — ruff check, ruff format --check and mypy on kweval/ (part of make test)
#   make image-check      — build the Docker image (docker, else buildah) and try it in chromium (not part of make test)
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
DATA   ?=

.PHONY: run test test-quick lint venv dev browser bench image-check clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

# --no-compile: the venv is writable, so Python compiles what is imported on first use; pip's compiling of every file
# of every package (torch's thousands) cost ~75 s of CPU per fresh venv.  The image compiles ahead (Dockerfile).
# "On first use" only if Python may write its bytecode: an environment that sets PYTHONDONTWRITEBYTECODE (this CI's
# does, as do many images) makes every process compile torch, transformers and pandas again on import, ~14 s of CPU
# each (bench/bench_imports.py); the tests start dozens (test workers, servers, CLI runs).  The venv is the
# project's own, so nothing make starts inherits it.
unexport PYTHONDONTWRITEBYTECODE
$(VENV)/.runtime: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install --no-compile -r requirements.txt
	$(BIN)/pip install --no-compile --no-deps -e .
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(BIN)/pip install --no-compile -r requirements-dev.txt
	touch $@

venv: $(VENV)/.runtime
dev: $(VENV)/.dev

# The end-to-end test drives Debian's chromium; install it when missing (needs root, as on CI).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; }

# DATA is handed to app.py as `--data`: a tidy or DNLP folder (see README, "Your own data").
run: $(VENV)/.runtime
	HF_HUB_OFFLINE=1 $(BIN)/streamlit run app.py --server.port $(PORT) $(if $(DATA),-- --data "$(DATA)")

# ruff (lint + format check) on everything, mypy on the core (pyproject.toml [tool.mypy]); the tests after it.
lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The browser tests mostly wait on a server and chromium: they run in BROWSER_JOBS processes (pytest-xdist), each with
# its own shared demo server and browser (tests/browser.py); the rest in TEST_JOBS processes (one per core here), each
# with one OpenBLAS thread and one torch / onnxruntime thread (OMP_NUM_THREADS, which kweval's embedders follow):
# TEST_JOBS processes already fill the cores, and a second thread each only spins (the embedding-heavy test files took
# 82-94 s with a thread per core in each process, 68-69 s with one).
BROWSER_JOBS ?= 2
TEST_JOBS ?= 2
# The browser tests' files, and only they hold browser tests (tests/conftest.py refuses a run otherwise): each run
# collects only its own files (collecting every module to deselect most cost each pytest process ~2.5 s of CPU).
BROWSER_FILES := test_browser*.py

test: $(VENV)/.dev browser lint
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -m "not browser" -n $(TEST_JOBS) --ignore-glob='tests/$(BROWSER_FILES)'
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q -m browser -n $(BROWSER_JOBS) tests/$(BROWSER_FILES)

test-quick: $(VENV)/.dev
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q -m "not slow and not browser"

bench: $(VENV)/.dev
	HF_HUB_OFFLINE=1 $(BIN)/python bench/run_all.py

# The Docker image as shipped: built, every page opened in chromium, a judgment kept across a restart (needs root).
image-check: $(VENV)/.dev browser
	bash scripts/check_image.sh

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
