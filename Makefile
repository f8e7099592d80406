# The self-test is `make test`; `make install && bin/mcp-server-python-sandbox` serves stdio.
# install: what the server needs to run; install-test: the tools the tests use besides.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install install-test install-datascience dev serve-http test test-loaded test-root test-pool-off test-user test-user-all test-long dist bench fuzz large-inputs soak crawl clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

install-test: $(VENV)/.installed-test

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[test]'
	touch $@

install-datascience: install
	$(PY) -m pip install -q -e '.[datascience]'

dev: install
	$(PY) bin/mcp-server-python-sandbox serve

serve-http: install
	$(PY) bin/mcp-server-python-sandbox serve --transport http

# The whole suite as root (warm pool on), the runner, MCP and corpus suites
# again with the pool off (it must change no behaviour), then the whole suite
# as an ordinary user created for it.
test: test-root test-pool-off test-user

# Most tests wait on servers and children, so each pass runs on a worker per CPU (at most 4;
# tests/worker_scopes.py keeps each file, and tests/redteam, on one worker). PARALLEL= runs serially.
PARALLEL ?= -n auto --maxprocesses 4 --dist loadfile

# The same with both CPUs kept busy by two loops that each pass starts and ends
# itself (tests/cpu_load.py): no verdict may depend on the machine's speed.
test-loaded:
	SANDBOX_TEST_CPU_LOAD=2 $(MAKE) test

test-root: install-test
	$(PY) -m pytest -q -m "not slow" $(PARALLEL) tests

test-pool-off: install-test
	SANDBOX_TEST_POOL_SIZE=0 $(PY) -m pytest -q -m "not slow" $(PARALLEL) tests/forkserver/test_runner.py \
		tests/jail/test_profiles_kernel.py tests/redteam/test_corpus.py -k "not doors"

# What an ordinary user's privileges change: which kernel layers apply (jail, fork server,
# red team), the server, its upstreams and its proxy running as that user (e2e, codemode,
# egress), the harmless code that must still run (compat), the install as written. The
# Python wall, the protocol and the settings are the same code whoever runs them: the
# root pass covers them, and `make test-user-all` runs everything as the user.
USER_PASS := tests/jail tests/forkserver tests/redteam tests/e2e tests/codemode tests/egress \
	tests/compat tests/mcp/test_profiles_mcp.py tests/packaging/test_install.py \
	tests/packaging/test_readme_clients.py

test-user: install-test
	$(PY) tests/run_as_user.py $(PARALLEL) $(USER_PASS)

test-user-all: install-test
	$(PY) tests/run_as_user.py $(PARALLEL) tests

# The long runs left out of `make test`: fuzzing, the soak-length checks, a 70 s execution.
test-long: install-test
	$(PY) -m pytest -q -m slow $(PARALLEL) tests

# dist/mcp-server-python-sandbox.pyz, and the wheel beside it
dist: install
	$(PY) tools/build_pyz.py
	$(PY) -m pip wheel -q --no-deps -w dist .

bench: install-test
	@command -v bwrap >/dev/null || echo "bench: bwrap is not installed, its baseline is skipped (apt-get install bubblewrap)" >&2
	$(PY) bench/run.py

fuzz: install-test
	$(PY) -m pytest -q -m slow tests/mcp/test_fuzz.py tests/restricted/test_library_overrides_fuzz.py

# execute_code's files at SANDBOX_MAX_INPUT_SIZE's default, every other setting at its own
large-inputs: install-test
	$(PY) -m pytest -q -m slow tests/mcp/test_inputs.py

soak: install-test
	$(PY) bench/soak.py

# What a restricted snippet can reach, crawled deeper than `make test` does (every object,
# every name, every zero-argument method, depth 5); data science with its extra installed.
crawl: install
	$(PY) tests/reachability.py

clean:
	rm -rf $(VENV) build dist .pytest_cache
