# Two commands on a fresh machine:  `make demo`  and  `make test`.
# Each creates (or reuses) .venv and installs what it needs, Debian packages included.
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test deps venv clean
demo: venv
	$(VENV)/bin/ticktock demo

test: venv
	$(PY) -m pytest -q

deps:
	@command -v espeak-ng >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq espeak-ng)
	@# the browser test drives Debian's chromium through Playwright (no Playwright browser download)
	@command -v chromium >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium)

venv: deps $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	# The CPU build of torch 2.13.0 is what this project pins on CPU machines (no multi-GB CUDA build).
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev,server,train]'
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache
