# cdplan: one command to install, build and run; one to install, build and test.
#   make run    install the Debian packages (as root, once), build, serve on 127.0.0.1:8080
#   make test   install, build, run every test through ctest
#   make asan   the same tests under ASan+UBSan
#   make bench  build and run the benchmarks (figures for docs/benchmarks.md and the README summary)
#   make install  the binary, its man page and bash completion under $(DESTDIR)$(PREFIX)
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
DESTDIR ?=
LISTEN ?= 127.0.0.1:8080
DB ?= cdplan.db
CMAKE_FLAGS ?=

APT_PACKAGES = build-essential cmake pkg-config libmicrohttpd-dev libcjson-dev libsqlite3-dev \
  libglpk-dev libcmocka-dev zlib1g-dev curl python3 python3-yaml clang-format clang libclang-rt-14-dev wrk slurm-wlm munge

# Browser tests (tests/browser): Debian's Chromium; Node.js + npm only where
# the machine has no node yet (Debian's nodejs/npm), then playwright-core by npm ci.
APT_PACKAGES += chromium
# The runner's CPU mode (dlrm_step, the plan-validation loop): PyTorch for /usr/bin/python3.
APT_PACKAGES += python3-torch

# help2man: the man page, generated from `cdplan --help` at build time (cli/CMakeLists.txt).
APT_PACKAGES += help2man

# promtool (tests/ecosystem: `promtool check metrics` on a live /metrics).
APT_PACKAGES += prometheus

# PostgreSQL (issue 29): libpq for hwdb/pg.c (pkg-config libpq), and the
# server whose initdb/pg_ctl start the _pg tests' throw-away cluster.
APT_PACKAGES += libpq-dev postgresql

.PHONY: deps build run test asan bench format format-check clean install

# Installs only what is missing; needs root (or sudo) the first time.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v npm >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@# the check runs in a subshell: its exit 1 must reach the ||, not end make's shell
	@(for m in playwright-core @redocly/cli ajv ajv-formats yaml; do \
	  [ -d node_modules/$$m ] || exit 1; done) 2>/dev/null || npm ci --no-audit --no-fund --offline 2>/dev/null || \
	  npm ci --no-audit --no-fund

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# Builds first only when there is no build yet; DESTDIR stages the install.
install:
	@[ -x $(BUILD)/cli/cdplan ] || $(MAKE) build
	cmake --build $(BUILD) --target cdplan_docs
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

run: build
	$(BUILD)/cli/cdplan serve --listen $(LISTEN) --db $(DB)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan:
	$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Debug -DCDPLAN_SANITIZE=ON -DCDPLAN_WERROR=ON"

bench: build
	cmake --build $(BUILD) --target bench -j $(JOBS)

format: build
	cmake --build $(BUILD) --target format

format-check: build
	cmake --build $(BUILD) --target format-check

clean:
	rm -rf build build-asan
