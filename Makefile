# ruscope: the two set-up commands are `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install demo emulator test lint bench

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $@

install: $(VENV)/.installed

# Until `ruscope demo` exists, the demo target starts the emulator on http://127.0.0.1:8081/.
demo: install
	$(VENV)/bin/ruscope emulator

emulator: install
	$(VENV)/bin/ruscope emulator

test: install
	$(PY) -m pytest -q

lint: install
	$(VENV)/bin/ruff check .

bench: install
	$(PY) benchmarks/bench_point_ops.py
	$(PY) benchmarks/bench_query.py
	$(PY) benchmarks/bench_replay.py
