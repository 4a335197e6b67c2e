# The one entry point for the everyday tasks; CI (.ci/run) runs `make check` too.
# Each target runs the tools of the active virtualenv, or of .venv when none is
# active (`make venv` makes it), so `make check` checks as CI checks.
#   make venv     the development set-up (CONTRIBUTING.md): .venv with requirements/dev.lock and promptmill (editable)
#   make check    compile --check, lint --strict, promptmill test, ruff check, ruff format --check, mypy
#   make test     the README's test command (two processes); one test: make test ARGS='-n0 tests/test_fit.py::test_name'
#   make test-fast the core, two processes: no browser, Spark, Ray, editors or slow files (SLOW_TESTS below)
#   make lowest   the suite at the lowest versions the ranges allow (tools/lowest; ARGS as for test)
#   make docs     the documentation site in site/: tools/gen_docs.py --check, then mkdocs build --strict
#   make lock     refresh requirements/dev.lock and lowest.lock (tools/lock)
#   make fix      ruff format, then ruff check --fix
#   make compiled the optional compiled wheel in dist/ (setup.py, PROMPTMILL_MYPYC=1; needs mypy and a C compiler)
#   make ci       the whole CI run (.ci/run): fresh virtualenvs, checks, both suites
#   make vscode   the VS Code extension: editors/vscode/promptmill.vsix (npm ci, compile, unit tests, vsce package)
#   make ts       the TypeScript runtime: npm ci and npm test in runtimes/typescript (unit tests and the conformance corpus)

SHELL := /bin/bash
PYTHON_DIRS := compiler tests bench tools
ARGS ?=

# found before PATH changes below: the interpreter `make venv` builds .venv from
SYSTEM_PYTHON := $(shell command -v python3)
export PATH := $(if $(VIRTUAL_ENV),$(VIRTUAL_ENV)/bin,$(CURDIR)/.venv/bin):$(PATH)

.PHONY: help venv check test test-fast lowest docs lock fix compiled ci vscode ts

help:
	@sed -n 's/^#   make /make /p' $(firstword $(MAKEFILE_LIST))

venv:
	$(SYSTEM_PYTHON) -m venv .venv
	.venv/bin/pip install -r requirements/dev.lock
	.venv/bin/pip install --no-deps -e .
	cd runtimes/typescript && npm ci --no-audit --no-fund --loglevel=error  # Node 20+: the TypeScript runtime the suite checks

check:
	promptmill compile --check
	promptmill lint --strict
	promptmill test
	ruff check $(PYTHON_DIRS)
	ruff format --check $(PYTHON_DIRS)
	mypy

test:
	python -m pytest -n 2 --dist loadfile $(ARGS)

# test-fast, the inner loop, leaves to `make test` the browser (web_*, docs_site), Spark and Ray (batch_engines),
# the editors (lsp*), the TypeScript runtime (Node: conformance_ts, ts_fixtures, typescript_doc; `make ts` runs its
# tests), and the files that mostly start CLI processes, crash or soak builds, run type
# checkers or build wheels (the slowest by --durations); hypothesis runs 25 examples (profile "fast")
SLOW_TESTS := batch_engines web_page web_server web_hostile web_live web_itemlabels lsp lsp_checker \
	lsp_completion lsp_hostile lsp_neovim lsp_preview hostile_cases hostile_cases_more hostile models_rules crash closed_output soak \
	types_checkers types_hostile types counts release tutorial review_snapshot_files review_diff_revisions \
	batch batch_output no_skips architecture_doc vertex_sdk bedrock docs_site conformance_ts ts_fixtures typescript_doc

test-fast:
	HYPOTHESIS_PROFILE=fast python -m pytest -n 2 --dist loadfile $(SLOW_TESTS:%=--ignore=tests/test_%.py) $(ARGS)

lowest:
	tools/lowest $(ARGS)

docs:
	python tools/gen_docs.py --check
	NO_MKDOCS_2_WARNING=1 mkdocs build --strict --site-dir site

lock:
	tools/lock

fix:
	ruff format $(PYTHON_DIRS)
	ruff check --fix $(PYTHON_DIRS)

compiled:
	PROMPTMILL_MYPYC=1 python -m pip wheel --no-build-isolation --no-deps -w dist .

ci:
	bash .ci/run

vscode:
	cd editors/vscode && npm ci --no-audit --no-fund && npm run compile && npm test && npx vsce package --out promptmill.vsix

ts:
	cd runtimes/typescript && npm ci --no-audit --no-fund && npm test
