# The one entry point for the everyday tasks; CI (.ci/run) runs `make check` too.
# Each target runs the tools of the active virtualenv, or of .venv when none is
# active (`make venv` makes it), so `make check` checks as CI checks.
#   make venv     the README's set-up: .venv with requirements/dev.lock and promptmill (editable)
#   make check    compile --check, lint --strict, promptmill test, ruff check, ruff format --check, mypy
#   make test     the README's test command (two processes); one test: make test ARGS='-n0 tests/test_fit.py::test_name'
#   make lowest   the suite at the lowest versions the ranges allow (tools/lowest; ARGS as for test)
#   make lock     refresh requirements/dev.lock and lowest.lock (tools/lock)
#   make fix      ruff format, then ruff check --fix
#   make compiled the optional compiled wheel in dist/ (setup.py, PROMPTMILL_MYPYC=1; needs mypy and a C compiler)
#   make ci       the whole CI run (.ci/run): fresh virtualenvs, checks, both suites

SHELL := /bin/bash
PYTHON_DIRS := compiler tests bench tools
ARGS ?=

# found before PATH changes below: the interpreter `make venv` builds .venv from
SYSTEM_PYTHON := $(shell command -v python3)
export PATH := $(if $(VIRTUAL_ENV),$(VIRTUAL_ENV)/bin,$(CURDIR)/.venv/bin):$(PATH)

.PHONY: help venv check test lowest lock fix compiled ci

help:
	@sed -n 's/^#   make /make /p' $(firstword $(MAKEFILE_LIST))

venv:
	$(SYSTEM_PYTHON) -m venv .venv
	.venv/bin/pip install -r requirements/dev.lock
	.venv/bin/pip install --no-deps -e .

check:
	promptmill compile --check
	promptmill lint --strict
	promptmill test
	ruff check $(PYTHON_DIRS)
	ruff format --check $(PYTHON_DIRS)
	mypy

test:
	python -m pytest -n 2 --dist loadfile $(ARGS)

lowest:
	tools/lowest $(ARGS)

lock:
	tools/lock

fix:
	ruff format $(PYTHON_DIRS)
	ruff check --fix $(PYTHON_DIRS)

compiled:
	PROMPTMILL_MYPYC=1 python -m pip wheel --no-build-isolation --no-deps -w dist .

ci:
	bash .ci/run
