# Every target sets up what it needs: a new machine only needs python3, node/npm and apt.
SHELL := /bin/bash
PORT ?= 3000
ENV := source ./env.sh &&
PY := .venv/bin/python

.PHONY: setup run run-scale test test-ready test-scale lint build chromium clean audit redis servers pg test-pg

.venv/.installed: requirements.txt requirements-dev.txt requirements-lock.txt
	test -x $(PY) || python3 -m venv .venv
	.venv/bin/pip install -q --disable-pip-version-check --no-deps -r requirements-lock.txt
	.venv/bin/pip check --disable-pip-version-check
	touch $@

tools/node_modules/.installed: tools/package.json tools/package-lock.json
	# install, not ci: the lock file holds only this platform's anvil binary, which ci refuses.
	npm install --prefix tools --no-audit --no-fund --loglevel=error
	touch $@

setup: .venv/.installed tools/node_modules/.installed

# Debian's Chromium for the browser tests (Playwright cannot download browsers here): its headless
# shell, and the desktop build for the QR unit's camera-permission tests; a Korean font so
# screenshots of the ko pages show Hangul (with Chromium's recommended packages: its fonts).
chromium:
	@{ command -v chromium && command -v chromium-headless-shell && fc-list | grep -qi nanum; } >/dev/null || \
	  python3 tools/debian.py --with-recommends chromium chromium-headless-shell fonts-nanum

# Debian's redis-server (installed when missing); `python tools/redisserver.py -- CMD` runs CMD next to a
# private instance on a free loopback port (data in data/redis, stopped on exit) with REDIS_URL set.
redis:
	python3 tools/redisserver.py --install

# Debian's postgresql and redis-server, installed when missing, before the test halves start (each
# half would otherwise install them: two apt-get runs at once, one failing on dpkg's lock).
servers: setup redis
	$(ENV) python tools/pgserver.py --install

# Compiles the Reflex frontend (production build) into .web/build.
build: setup
	$(ENV) python -m wallet_app.build

# Development mode (DEV_MODE=1): local chain, dev sign-in and Drive stand-ins, on loopback only.
run: setup
	$(ENV) python -m wallet_app.serve --dev --port $(PORT)

# `make run` with a private Redis (REDIS_URL: Reflex's state, limits and sign-in memory shared) and
# 2 backend workers behind the one port.
run-scale: setup
	$(ENV) python tools/pgserver.py -- python tools/redisserver.py -- \
	  python -m wallet_app.serve --dev --port $(PORT) --workers 2

# What the tests need is made first, independent parts at once (-j here only: `make run`'s server
# output must not wait in make's buffer): pip's and npm's installs beside apt-get's, then the
# linters (a finding fails the run) beside the build, which installs .web/node_modules, whose React
# and Radix the QR unit's test bundle uses. Then two halves side by side (each alone
# leaves a core idle much of the time): every test on SQLite (1 worker per app server), and the
# scale suites (test-scale) on PostgreSQL + Redis + 2 workers (NO_DB_TESTS in the latter only).
# Their output is printed when they end, and kept in test-results/sqlite/ and test-results/scale/.
test:
	@$(MAKE) --no-print-directory -j4 --output-sync=target test-ready
	$(ENV) python tools/side_by_side.py "sqlite=python -m pytest -q --durations=15 tests $(NO_DB_TESTS:%=--ignore=%)" \
	  "scale=$(SCALE_PYTEST) $(NO_DB_TESTS)"
# The suites that use no database (Solidity on anvil, the JS units in Chromium) run once, in the
# scale half: it has less else to do, and the halves then end about together.
NO_DB_TESTS := tests/contracts tests/js
test-ready: setup chromium servers lint build

# The API and e2e suites, and the unit tests that touch the database (migrations, row locks, the
# server script), on one private PostgreSQL and one private Redis (tools/pgserver.py and
# tools/redisserver.py, temp data, free loopback ports, installed from Debian when missing, stopped
# at the end): every e2e app server runs 2 workers on Reflex's Redis state manager.
SCALE_TESTS := tests/unit/test_migrations.py tests/unit/test_crud.py tests/unit/test_pgserver.py tests/unit/test_engine_fork.py tests/unit/test_engine_ping.py tests/unit/test_exclusive_turn.py \
  tests/api tests/e2e
SCALE_PYTEST := TEST_DATABASE=pg TEST_REDIS=1 python -m pytest -q --durations=15 $(SCALE_TESTS)
test-scale: setup chromium build
	$(ENV) $(SCALE_PYTEST)

# ruff (lint and format check) and mypy over the app's Python (wallet_app, custom_components, contracts);
# ruff's lint also over the tests and the benches.
lint: setup
	$(ENV) ruff check wallet_app custom_components contracts tests bench && \
	  ruff format --check wallet_app custom_components contracts && mypy

# Known vulnerabilities in what ships (requirements.txt; the browser's npm packages): pip-audit and
# npm audit ask their public advisory services. Not part of test: it needs those services, and
# fails (within minutes, not hanging) when they cannot be reached.
audit: setup
	$(ENV) python tools/audit.py

# A private PostgreSQL on loopback (installs Debian's postgresql when missing), data in data/postgres;
# prints its DATABASE_URL and runs until Ctrl-C. `python tools/pgserver.py -- CMD` runs CMD against it.
PG_PORT ?= 5433
pg: setup
	$(ENV) python tools/pgserver.py --port $(PG_PORT)

# The unit and API suites on PostgreSQL: a private server (temp data, free port) for the run, a
# database per test (tests/conftest.py). Chromium for the API's browser tests.
test-pg: setup chromium
	$(ENV) TEST_DATABASE=pg python -m pytest -q tests/unit tests/api

clean:
	rm -rf .web .cache data assets/external assets/argon2
