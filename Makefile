# ONNX Studio developer commands. `make run` opens the app on the bundled sample model;
# `make test` runs the test suite (minutes: corpus walks on a fixed sample), `make test-all`
# everything CI runs (packaging, the `full` tests, every corpus walk over the whole corpus),
# `make test-stress` the suite three times under a busy loop on every core. Each creates .venv
# and installs what is needed first, from the committed lock file (requirements/dev.txt,
# exact versions with hashes), so a dependency's new release cannot change a fresh machine's
# run. `make upgrade-deps` re-locks on purpose: run it, run `make test`, commit the new lock.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LOCK   := requirements/dev.txt
PYTEST_ARGS ?=
# Compiled bytecode is cached (__pycache__, git-ignored): a shell or image that sets
# PYTHONDONTWRITEBYTECODE makes every test process and every CLI child it starts compile the
# code from source again (collection alone: 16 s CPU per worker instead of 7)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-all test-stress test-latest bench fuzz venv upgrade-deps clean bundle bundle-tools test-bundle release test-wheel

$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --require-hashes -r $(LOCK)
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/onnx-studio $(MODEL)

# One worker per core. worksteal, not loadfile: a slow file is no longer one worker's tail
# (an idle worker takes half of the other's queue), and a worker that dies is replaced
# without the hang pytest-xdist 3.8's loadfile scheduler has after a crash (its issue #1378).
PYTEST := QT_QPA_PLATFORM=offscreen $(PY) -m pytest -n auto --dist worksteal

test: $(STAMP)
	$(PYTEST) $(PYTEST_ARGS)

# .ci/test-all: the packaging stages (test-bundle, test-wheel), then the suite with the `full`
# tests and --corpus=all; each stage's duration is printed, pytest's summary line comes last.
test-all: $(STAMP)
	.ci/test-all

# `make test` STRESS_RUNS times in a row under one busy loop per core (tests/tools/stress.py).
STRESS_RUNS ?= 3
test-stress: $(STAMP)
	$(PY) -m tests.tools.stress --runs $(STRESS_RUNS) -- $(MAKE) --no-print-directory test

bench: $(STAMP)
	for b in tests/benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# Mutated real models through info, check, convert, render and the window's open: no crash,
# no hang, no traceback. Failing models land in fuzz-findings/ (add the small ones to
# tests/fuzz/cases/). FUZZ_COUNT / FUZZ_SEED choose how many and which.
FUZZ_COUNT ?= 1000
FUZZ_SEED  ?= 0
fuzz: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.fuzz.harness --count $(FUZZ_COUNT) --seed $(FUZZ_SEED)

# Re-lock every dependency to its newest release allowed by pyproject's ranges, for every
# supported Python and platform.
upgrade-deps: $(STAMP)
	$(PY) -m pip install -q uv
	$(VENV)/bin/uv pip compile --upgrade --universal --python-version 3.10 --generate-hashes \
	  --no-header --annotation-style line pyproject.toml requirements/build.in \
	  --extra dev --extra bench --extra ray -o $(LOCK)

# The suite against the newest releases, unlocked (what a user's `pip install` gets), in a
# separate environment: the check that the next `upgrade-deps` will be green.
test-latest:
	test -x .venv-latest/bin/python || $(PYTHON) -m venv .venv-latest
	.venv-latest/bin/python -m pip install -q --upgrade -e ".[dev,bench,ray]"
	.venv-latest/bin/python -m pip list 2>/dev/null | grep -iE '^(onnx|onnxruntime|onnx-ir|numpy|protobuf|pyside6)'
	QT_QPA_PLATFORM=offscreen .venv-latest/bin/python -m pytest -n auto --dist worksteal $(PYTEST_ARGS)

# The desktop bundle (PyInstaller, a build tool: installed into .venv here, never a runtime
# dependency) -> dist/onnx-studio/onnx-studio. `make test-bundle` runs the bundle's smoke test
# (pytest marker `bundle`), `make release` packs the Linux tarball, `make test-wheel` installs
# the wheel into a fresh venv and runs the same smoke test (marker `wheel`).
PYINSTALLER ?= pyinstaller==6.22.3 pyinstaller-hooks-contrib==2026.9
BUNDLE := dist/onnx-studio

bundle-tools: $(STAMP)
	$(PY) -m pip install -q $(PYINSTALLER)

bundle: bundle-tools
	$(VENV)/bin/pyinstaller --noconfirm --log-level ERROR --distpath dist --workpath build/pyinstaller \
	  packaging/onnx-studio.spec

release: bundle
	sh packaging/linux/make-release.sh $(BUNDLE) dist

test-bundle: release
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -m bundle -p no:randomly tests/packaging $(PYTEST_ARGS)

test-wheel: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -m wheel -p no:randomly tests/packaging $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .venv-latest build dist *.egg-info .pytest_cache .hypothesis fuzz-findings
