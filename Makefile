# PyTorch Internals course. Everything runs from the project's own .venv.
#   make lab      set up, then open JupyterLab on your working copy of the student notebooks
#   make test     set up, then run the whole test suite (what CI runs)
#   make grade    instructor demo: regenerate release/, autograde a demo class, print the table
#   make release  regenerate release/ from source/ (after editing a source notebook)
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
# Jupyter refuses to run as root unless told (containers, CI, some VMs).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
PYTEST_ARGS ?=

.PHONY: setup lab test grade release

setup: $(STAMP)

# Re-installs only when pyproject.toml (the pins) changed since the last install.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required (set PYTHON=...)")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
	@for ext in formgrader assignment_list validate_assignment; do \
	  $(BIN)/jupyter server extension enable --sys-prefix nbgrader.server_extensions.$$ext >/dev/null 2>&1; done
	@$(BIN)/jupyter labextension enable @jupyter/nbgrader >/dev/null 2>&1 || true
	@touch $(STAMP)
	@echo "course environment ready in $(VENV)"

# Students work in my_work/, a git-ignored copy of release/. Files already there
# are never overwritten, so regenerating release/ cannot lose a student's work.
lab: setup
	@mkdir -p my_work && cp -rn release/. my_work/
	$(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(ROOT_FLAG) $(LAB_ARGS) my_work/01_dynamic_graphs/01_dynamic_graphs.ipynb

test: setup
	$(BIN)/python -m pytest -n 2 --dist loadgroup -rP --durations=15 $(PYTEST_ARGS) tests

grade: setup
	$(BIN)/python -m course.grading demo

release: setup
	$(BIN)/python -m course.grading release
