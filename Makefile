# Two commands on a fresh machine:  `make demo`  and  `make test`.
# Each creates (or reuses) .venv and installs what it needs, Debian packages included:
#   make demo   espeak-ng, torch and the package alone (no browser, no test/server/training extras)
#   make test   the same, plus the extras [dev,server,train] and Debian's chromium for the browser test
# torch: `torch==2.13.0`, which on these machines is the CPU build kept on disk (no multi-GB CUDA download).
# Elsewhere, to get the CPU build on a machine without a GPU, point pip at PyTorch's CPU wheel index:
#   make demo TORCH_SPEC='torch==2.13.0+cpu' TORCH_INDEX='--extra-index-url <that index>'
# (TORCH_SPEC and TORCH_INDEX are passed to `pip install` as they are).
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=

.PHONY: demo test deps deps-demo deps-test venv clean
demo: deps-demo $(VENV)/.demo-installed
	$(VENV)/bin/ticktock demo

test: deps-demo deps-test $(VENV)/.installed
	$(PY) -m pytest -q

deps: deps-demo deps-test

# espeak-ng: speech for the demo's own recordings, the suites and the tests
deps-demo:
	@command -v espeak-ng >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq espeak-ng)

# the browser test drives Debian's chromium through Playwright (no Playwright browser download); SAM (the
# held-out engine's test) where node and npm are there; the other engines' tests: scripts/install_test_engines.sh
deps-test:
	@command -v chromium >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium)
	@! command -v npm >/dev/null || scripts/prepare_sam.sh >/dev/null || echo "SAM not installed: its test skips"
	@scripts/install_test_engines.sh || echo "some speech engines not installed: their tests skip"

venv: deps $(VENV)/.installed

$(VENV)/.torch:
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q $(TORCH_INDEX) '$(TORCH_SPEC)'
	touch $@

$(VENV)/.demo-installed: pyproject.toml $(VENV)/.torch
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(PY) -m pip install -q -e '.[dev,server,train]'
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache
