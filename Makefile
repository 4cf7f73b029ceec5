# ONNX Studio developer commands. `make run` opens the app on the bundled sample model;
# `make test` runs the test suite. Both create .venv and install what is needed first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: run test bench venv clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev,bench]"
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/onnx-studio $(MODEL)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -n auto --dist loadfile $(PYTEST_ARGS)

bench: $(STAMP)
	for b in tests/benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
