# PyTorch Internals course. Everything runs from the project's own .venv.
#   make lab         set up, then open JupyterLab for a student, rooted at my_work/ (your own copy)
#   make test        set up (system packages too), then run the whole test suite (what CI runs)
#   make instructor  JupyterLab for the instructor, rooted at the course, with Formgrader
#   make autograde CHAPTER=01_dynamic_graphs   grade submitted/*/CHAPTER through the judge
#   make grade-class CHAPTERS="01_dynamic_graphs 02_autograd" [JOBS=2] [DASK=tls://127.0.0.1:8786]   a whole class
#   make dask-certs  the Dask cluster's private CA and certificates in DASK_CERTS (.judge/dask)
#   make dask-cluster [DASK_WORKERS=2]   a mutual-TLS Dask scheduler and workers on 127.0.0.1:8786
#   make feedback CHAPTER=01_dynamic_graphs [GRADEBOOK=.demo/gradebook.db]   nbgrader generate_feedback
#   make grade       instructor demo: regenerate release/, grade a demo class (progress, cost said first)
#   make release     regenerate release/ from source/ (after editing a source notebook)
#   make publish DEST=../pytorch-internals-student [REPO=owner/name]   the student repository (no solution, no hidden test), committed
#   make sweep       every hidden test on the reference for 100 seeds, every chapter (the test run samples 12)
#   make check       every mutant group, alternative and attack of every chapter graded end to end
#   make bench       time the chapters and class grading (stock nbgrader vs the judge, and their scores)
#   make gpu-check [CHAPTERS=01_dynamic_graphs] [GPU_PYTHON=...]   every chapter as a student on this machine's torch
#   make lock        regenerate the locks (requirements*.lock) from pyproject.toml with pip-tools' pip-compile
SHELL := /bin/bash
ifndef PYTHON
PYTHON := $(shell command -v python3.11 || command -v python3)
endif
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
# nbgrader shells out to `alembic`, so the venv's bin/ must come first on PATH.
export PATH := $(BIN):$(PATH)
export HF_HUB_OFFLINE := 1
LAB_ARGS ?=
PYTEST_ARGS ?=
# Test processes: two on two cores. Each starts kernels and sandboxed runs of its own, so two keep both cores busy
# (94-100 % from the end of set-up to the end; the tests take their longest groups first). Whole fresh-clone runs
# of one commit on this 2-core machine: three processes 2282 s of tests (40 min 21 s in all, 37.6 CPU-minutes of
# user time), two 2099 s (37 min 20 s, 32.5): a third process added only switching between them.
TEST_WORKERS ?= 2
CHAPTER ?= 01_dynamic_graphs
CHAPTERS ?= $(notdir $(wildcard source/0*))
JOBS ?= 0
DASK ?=
DASK_CERTS ?= .judge/dask
DASK_WORKERS ?= 2
DEST ?=
# Debian packages the tests need: the sandbox, the browser for the browser tests, a PostgreSQL server.
SYSTEM_PACKAGES := bubblewrap chromium postgresql

.PHONY: setup lock system system-packages lab instructor test durations grade release autograde grade-class bench feedback publish sweep check gradebook gpu-check profiles bytecode

# A fresh clone's gradebook (gradebook.db) learns every chapter: nbgrader generate_assignment --force for each
# (release/ is written again from source/, identical to the committed one). Run once before the first grading.
gradebook: setup
	@for ch in $(CHAPTERS); do $(BIN)/nbgrader generate_assignment $$ch --force --log-level=WARN || exit 1; done
	@echo "gradebook.db knows: $(CHAPTERS)"

setup: $(STAMP)

# Re-installs only when pyproject.toml or requirements.lock changed since the last install. The stack comes from the
# lock alone (every transitive dependency pinned, with hashes: pip checks each file; --no-deps: pip resolves nothing,
# the lock is the resolution, and `pip check` finds it complete, tests/test_pins.py), then the course itself without
# its dependencies and without build isolation (the build uses the locked setuptools; nothing unlocked is fetched).
# Without --no-deps, pip 23 (Python 3.11's) resolved jupyter-events' jsonschema[format-nongpl]>=4.18 to the newest
# jsonschema, not the locked 4.23.0, and refused it as unpinned.
# SHARED_VENV=/opt/pytorch-internals/.venv (an instructor's clone on a hub): a .venv that uses that installation's
# packages (read-only, nothing downloaded) and this clone's own course; PYTHON= the hub's interpreter
# (/srv/pytorch-internals-hub/python/bin/python3.11) where the system has no Python 3.11 of its own.
SHARED_VENV ?=
$(STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required (set PYTHON=...)")'
ifneq ($(SHARED_VENV),)
	@test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	$(BIN)/python -m course.serving.hub --share-venv "$(SHARED_VENV)"
else
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python tools/install_lock.py $(BIN)/python requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
endif
	@for ext in formgrader assignment_list validate_assignment; do \
	  $(BIN)/jupyter server extension enable --sys-prefix nbgrader.server_extensions.$$ext >/dev/null 2>&1; done
	@$(BIN)/jupyter labextension enable @jupyter/nbgrader >/dev/null 2>&1 || true
	@touch $(STAMP)
	@echo "course environment ready in $(VENV)"

# The locks, hashes included. requirements.lock, generated by pip-tools (pip-compile 7.7.0) from pyproject.toml, has
# the extras (what `make setup`, `make test` and CI install: Linux x86-64). requirements-student.lock has none (the
# student repository's, `make publish` copies it) and is universal: uv (0.13.9) resolves it for Python 3.11 on every
# platform (Linux, macOS, Windows) at once, platform-only packages (appnope, colorama, pywinpty) and Linux-only ones
# (nvidia-*, cuda-*, triton) carrying their environment markers, every file of each version hashed (PyPI's: --no-config
# and --default-index, never this machine's pip config or wheel folders); --constraints=requirements.lock holds every
# version requirements.lock has, so the two cannot disagree. --python-version 3.11.5: soupsieve (locked) needs it.
# requirements-binder.lock (Binder's, environment.yml installs it) is written from the student lock: CPU-only.
# Rerun after changing a pin in pyproject.toml: without --upgrade, pip-compile keeps every other locked version.
# The tools live in a venv of their own, never in .venv (python3.11 -m venv /srv/piptools &&
# /srv/piptools/bin/pip install pip-tools==7.7.0 uv==0.13.9; or make lock PIPTOOLS_COMPILE=... UV=...; not
# PIP_COMPILE, which pip itself reads from the environment as its --compile option).
PIPTOOLS_COMPILE ?= $(or $(shell command -v pip-compile),/srv/piptools/bin/pip-compile)
UV ?= $(or $(shell command -v uv),/srv/piptools/bin/uv)
LOCK_FLAGS := --strip-extras --allow-unsafe --generate-hashes --no-emit-index-url --no-emit-find-links
STUDENT_LOCK_FLAGS := --no-config --no-python-downloads --universal --python-version 3.11.5 --generate-hashes \
	--default-index https://pypi.org/simple
lock:
	$(PIPTOOLS_COMPILE) --all-extras $(LOCK_FLAGS) --output-file=requirements.lock pyproject.toml
	$(UV) pip compile $(STUDENT_LOCK_FLAGS) --constraints=requirements.lock --output-file=requirements-student.lock pyproject.toml
	$(PYTHON) -m course.serving.publish --binder-lock

# Installs the Debian packages only when one is missing (fast the second time). Without root or
# sudo it says what to install; the sandbox then degrades loudly and the browser and PostgreSQL
# tests skip with that reason. `system` is these and the hub's (hub-system, below).
system: system-packages

system-packages:
	@missing=""; command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	 command -v chromium >/dev/null || missing="$$missing chromium"; \
	 ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	 if [ -n "$$missing" ]; then \
	   if [ "$$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=none; fi; \
	   if [ "$$SUDO" = none ]; then echo "WARNING: please install:$$missing (apt-get install$$missing)"; \
	   else echo "installing:$$missing"; $$SUDO apt-get update -qq >/dev/null && \
	     DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; fi; \
	 fi

# Students work in my_work/, a git-ignored copy of release/ (files already there are never
# overwritten, so regenerating release/ cannot lose a student's work). JupyterLab is rooted there,
# with the student extensions only (Assignments, Validate) and the local exchange.
lab: setup
	$(BIN)/python -m course.lab serve student "$(CURDIR)" $(LAB_ARGS)

# The instructor's JupyterLab: the whole course, Formgrader, the exchange. GRADEBOOK=.demo/gradebook.db
# shows the demo class of `make grade`.
GRADEBOOK ?= gradebook.db
instructor: setup
	GRADEBOOK=$(GRADEBOOK) $(BIN)/python -m course.lab serve instructor "$(CURDIR)" $(LAB_ARGS)

# One OpenMP thread per test process: $(TEST_WORKERS) processes share two cores (see tests/conftest.py for the measurement).
# The Debian packages install beside the Python ones (apt and pip each keep one core busy on a fresh machine).
# The workers take the groups longest first, in the order tests/conftest.py gives them from tests/durations.json
# (--no-loadscope-reorder: xdist's own reordering, by number of tests, would undo it).
PYTEST_RUN = OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -n $(TEST_WORKERS) \
	--dist loadgroup --no-loadscope-reorder -rP --durations=25
test:
	@$(MAKE) --no-print-directory -j2 setup system-packages
	@$(MAKE) --no-print-directory system bytecode
	$(PYTEST_RUN) $(PYTEST_ARGS) tests

# The course's own modules as bytecode, written once (compileall skips what is current). Where
# PYTHONDONTWRITEBYTECODE is set (some CI machines; the sandbox sets it for everything inside), Python never writes
# it, so every process compiled course/ from source again: a kernel or grading process importing the grading and
# chapter helpers spent 0.14 s of CPU in course/ modules, 0.04 s with their bytecode (-X importtime, here), in each
# of the hundreds of processes a test run or a class grading starts. The sandbox reads it through its read-only view.
# (After setup: the targets that need it name both.)
bytecode:
	@$(BIN)/python -m compileall -q course tools >/dev/null

# The whole test run, writing how long each test took into tests/durations.json (the order of the next runs).
durations:
	@COURSE_RECORD_DURATIONS="$(CURDIR)/tests/durations.json" $(MAKE) --no-print-directory test

grade: setup bytecode
	$(BIN)/python -m course.grading demo

autograde: setup bytecode
	$(BIN)/python -m course.grading autograde $(CHAPTER) --jobs $(JOBS) $(if $(FORCE),--force,) $(if $(DASK),--dask $(DASK) --dask-certs $(DASK_CERTS),)

grade-class: setup bytecode
	$(BIN)/python -m course.grading grade-class $(CHAPTERS) --jobs $(JOBS) $(if $(FORCE),--force,) $(if $(DASK),--dask $(DASK) --dask-certs $(DASK_CERTS),)

# Grading on Dask: certificates once, then a scheduler and workers that require them (README, "Grading on Dask").
.PHONY: dask-certs dask-cluster
dask-certs: setup
	$(BIN)/python -m course.grading dask-certs $(DASK_CERTS)

dask-cluster: setup
	$(BIN)/python -m course.grading dask-cluster --certs $(DASK_CERTS) --workers $(DASK_WORKERS)

# nbgrader's feedback (the graded notebook as HTML, with the judge's messages) from the gradebook GRADEBOOK:
# gradebook.db for your class, .demo/gradebook.db for the demo class of `make grade`.
feedback: setup
	COURSE_GRADEBOOK_URL=sqlite:///$(abspath $(GRADEBOOK)) $(BIN)/nbgrader generate_feedback $(CHAPTER) --force

# REPO=owner/name: the student repository on GitHub, for its Binder badge (default: DEST's origin remote).
# DEST becomes a git repository with one new commit each time (FORCE=1 replaces its files, not its history).
REPO ?=
publish: setup
	@test -n "$(DEST)" || { echo 'usage: make publish DEST=../pytorch-internals-student [REPO=owner/name] [FORCE=1]'; exit 2; }
	$(BIN)/python -m course.serving.publish "$(DEST)" $(if $(FORCE),--force,) $(if $(REPO),--repo "$(REPO)",)

# The project's own GPU check (tools/gpu_check.py): every chapter of CHAPTERS run as a student (reference answers,
# hidden tests out), errors allowed, one kernel each, on the torch of GPU_PYTHON (default: the course's .venv).
# Report: .bench/gpu-check/report.md and report.json. Another interpreter keeps its own torch (README, "For contributors").
GPU_PYTHON ?=
gpu-check: $(if $(GPU_PYTHON),,setup)
	HF_HUB_OFFLINE=1 $(or $(GPU_PYTHON),$(BIN)/python) tools/gpu_check.py $(CHAPTERS)

# The full proofs the test run samples: every hidden test on the reference for 100 seeds (and do-nothing answers for
# 10), and every group of mutants and alternatives graded end to end (a sandboxed notebook each) with the attacks.
SEEDS ?= 100
sweep: setup
	@set -o pipefail; for ch in $(CHAPTERS); do $(BIN)/python -m course.grading sweep $$ch --seeds $(SEEDS) | tail -n 3 || exit 1; done
check: setup system
	$(BIN)/python -m course.grading check $(CHAPTERS) --attacks

# Every mutant's verdict profile (source/<chapter>/exercises/profiles.json), from which grading names a student's
# mistake: run it after changing a chapter's judge.py, its reference or a mutant (the test run says when).
profiles: setup
	$(BIN)/python -m course.grading profiles $(CHAPTERS)

bench: setup system
	$(BIN)/python benchmarks/bench.py

release: setup
	$(BIN)/python -m course.grading release $(RELEASE_CHAPTERS)

# ---- A class on one machine: JupyterHub (make hub) -----------------------------------------------------------
# Owned by the class-infrastructure work (course/serving/hub.py, tests/test_hub.py). `make system` (and so
# `make test`) runs hub-system: configurable-http-proxy from npm into .venv/bin (Node.js and npm from Debian
# when missing; JupyterHub itself is pinned in pyproject.toml's `class` extra). Nothing fails here: a missing
# piece is reported, `make hub` then stops with the reason and tests/test_hub.py skips with it.
#   make hub INSTRUCTOR=alice STUDENTS="bob carol" COURSE=/home/alice/pytorch-internals [HUB_ARGS="--port 8000 ..."]
# run as root from root's own installation (a clone owned by root: the hub refuses code another user can change),
# runs JupyterHub for those local Unix users on 127.0.0.1:8000 (PAM log-in: their own passwords); COURSE is the
# instructor's own clone, which must belong to INSTRUCTOR (README: "A class on one machine").
CHP_VERSION ?= 5.3.0
CHP_VERSION_OLD_NODE ?= 4.6.3
INSTRUCTOR ?=
STUDENTS ?=
HUB_ARGS ?=
COURSE ?= $(CURDIR)
.PHONY: hub hub-system
system: hub-system

hub-system: setup
	@if ! command -v npm >/dev/null; then \
	   if [ "$$(id -u)" = 0 ]; then echo "installing: nodejs npm"; apt-get update -qq >/dev/null && \
	     DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null; \
	   else echo "WARNING: the hub needs Node.js and npm (apt-get install nodejs npm)"; fi; fi
	@if command -v npm >/dev/null; then \
	   want=$(CHP_VERSION); node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' || want=$(CHP_VERSION_OLD_NODE); \
	   test "$$($(BIN)/configurable-http-proxy --version 2>/dev/null)" = "$$want" || \
	   npm install --global --prefix $(VENV) --no-audit --no-fund --loglevel=error configurable-http-proxy@$$want >/dev/null 2>&1 || \
	   echo "WARNING: could not install configurable-http-proxy@$$want from npm"; fi

hub: setup hub-system
	@test -n "$(INSTRUCTOR)" -a -n "$(STUDENTS)" || { echo 'usage: sudo make hub INSTRUCTOR=name STUDENTS="name name"'; exit 2; }
	$(BIN)/python -m course.grading hub --instructor "$(INSTRUCTOR)" --students "$(shell echo $(STUDENTS) | tr ' ' ',')" --course "$(COURSE)" $(HUB_ARGS)
