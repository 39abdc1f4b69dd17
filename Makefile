# SPDX-License-Identifier: MIT
# topdownd: Intel TopDown metrics daemon.  `make check` is the test command.
#
#   make            build daemon/topdownd and tests/fakepmu/libfakepmu.so
#   make run        run topdownd in the foreground on 127.0.0.1:10412
#   make demo       the same on the Sapphire Rapids fixture under the fake PMU
#   make deps       install the missing Debian packages (a no-op when all are there);
#                   make run and make demo install only what they need
#   make check-arm64  cross-build the daemon and unit tests for arm64 and run
#                   the unit tests under qemu-user (part of make check)
#   make check-kernel the kernel lane: Debian's arm64 kernel under QEMU with a
#                   real PMU driver judges the daemon and the fake PMU (part of
#                   make check; tests/kernel/lane.t)
#   make check      deps, lint, unit + integration tests, then the same under
#                   AddressSanitizer + UndefinedBehaviorSanitizer, then the unit
#                   tests and the threaded integration tests under ThreadSanitizer
#   make bench      performance figures against their targets (not part of check)
#   make fuzz       every libFuzzer harness, FUZZ_SECONDS each (default 60)
#   make install    PREFIX, DESTDIR, SYSCONFDIR, UNITDIR, DOCDIR are honoured
#   make uninstall  the same variables; the configuration file stays
#   make deb        a Debian package (dpkg-buildpackage) under build/deb
#   make clean

VERSION := 0.1.0
REVISION := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/topdownd
SYSCONFDIR ?= /etc
# Units: where systemd looks for them (its pkg-config file) when installing
# under its prefix, /usr; under $(PREFIX)/lib/systemd/system otherwise.
SYSTEMD_UNITDIR := $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
UNITDIR ?= $(if $(and $(filter /usr,$(PREFIX)),$(SYSTEMD_UNITDIR)),$(SYSTEMD_UNITDIR),$(PREFIX)/lib/systemd/system)
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wcast-qual -Wformat=2 -Werror
PKGS := libmicrohttpd libsystemd jansson inih libisal gnutls libbpf yaml-0.1

# SAN=1 builds everything under build/asan with ASan + UBSan, SAN=thread
# under build/tsan with ThreadSanitizer; CROSS=arm64 the daemon and unit
# tests under build/arm64 with Debian's cross compiler and arm64 -dev
# packages (multiarch).
PKG_CONFIG := pkg-config
# ISA-L's Debian packages are not multi-arch (libisal2:arm64 and :amd64
# exclude each other), so the cross-build takes the arm64 ones unpacked
# into a private root that make deps fills (ARM64_UNPACK).
ARM64_ROOT := $(abspath build/arm64-root)
ARM64_LIBDIR := $(ARM64_ROOT)/usr/lib/aarch64-linux-gnu
ifeq ($(CROSS),arm64)
BUILD := build/arm64
CC := aarch64-linux-gnu-gcc
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig:$(ARM64_LIBDIR)/pkgconfig pkg-config
SANFLAGS :=
TOPDOWND := $(BUILD)/topdownd
else ifeq ($(SAN),1)
BUILD := build/asan
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TOPDOWND := $(BUILD)/topdownd
else ifeq ($(SAN),thread)
BUILD := build/tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
TOPDOWND := $(BUILD)/topdownd
else
BUILD := build
SANFLAGS :=
TOPDOWND := daemon/topdownd
endif

# Evaluated when used, after `make deps` has installed the .pc files.
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS))
ALL_CFLAGS = -std=gnu11 $(WARNINGS) -D_GNU_SOURCE $(SANFLAGS) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
LIBS = $(PKG_LIBS) -lcrypt -lpthread -lm

# The daemon's subsystem folders (build-aux/check-layers ranks them; each
# one's headers are included by name, so every folder is on the path).
DAEMON_DIRS := daemon $(patsubst %/,%,$(sort $(dir $(wildcard daemon/*/*.c))))
DAEMON_INC := $(addprefix -I,$(DAEMON_DIRS))
DAEMON_SRCS := $(wildcard $(addsuffix /*.c,$(DAEMON_DIRS)))
DAEMON_OBJS := $(patsubst daemon/%.c,$(BUILD)/daemon/%.o,$(DAEMON_SRCS))
# Everything but main(), for the unit tests to link against.
LIB_OBJS := $(filter-out $(BUILD)/daemon/main.o,$(DAEMON_OBJS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))

FAKEPMU := tests/fakepmu/libfakepmu.so
FAKEPMU_SRCS := $(filter-out tests/fakepmu/test_%.c,$(wildcard tests/fakepmu/*.c))
FAKEPMU_TEST_SRCS := $(wildcard tests/fakepmu/test_*.c)
FAKEPMU_TEST_BINS := $(patsubst tests/fakepmu/%.c,build/tests/fakepmu/%,$(FAKEPMU_TEST_SRCS))

# The longest first, so that prove's jobs finish together rather than
# one of them running a long test alone at the end.
SLOW_TESTS := tests/integration/25-perf-parity.t tests/integration/62-package.t tests/integration/73-abuse-battery.t \
	tests/integration/42-fleet.t tests/integration/63-first-run.t tests/integration/29-cost.t
INTEGRATION_TESTS := $(sort $(wildcard tests/integration/*.t))
INTEGRATION_TESTS := $(filter $(SLOW_TESTS),$(INTEGRATION_TESTS)) \
	$(filter-out $(SLOW_TESTS),$(INTEGRATION_TESTS))
# Those that exercise no sanitized code (they build their own binaries or
# run the plain one under valgrind): in the plain pass only.
PLAIN_ONLY_TESTS := tests/integration/62-package.t tests/integration/63-first-run.t \
	tests/integration/72-valgrind.t tests/integration/29-cost.t
ifneq ($(SAN),)
INTEGRATION_TESTS := $(filter-out $(PLAIN_ONLY_TESTS),$(INTEGRATION_TESTS))
endif
# The ones that drive the threads (libmicrohttpd's, the workers, the
# reaper) hard: run again under ThreadSanitizer.
THREADED_TESTS := tests/integration/30-http.t tests/integration/35-live-page.t \
	tests/integration/70-security.t tests/integration/73-abuse-battery.t

# Debian 12 packages: building, then testing (README "Requirements" lists them).
DEB_BUILD := gcc make pkg-config libmicrohttpd-dev libgnutls28-dev libsystemd-dev \
	libjansson-dev libinih-dev libisal-dev libcrypt-dev libbpf-dev bpftool clang libyaml-dev
DEB_TEST := libcmocka-dev curl prometheus python3 python3-prometheus-client jq \
	systemd clang libclang-rt-14-dev valgrind wrk nginx-light perl cppcheck \
	man-db mandoc openssl linux-perf chromium chromium-driver python3-selenium \
	git libcap2-bin util-linux debootstrap qemu-system-arm cpio python3-yaml
# make deb: the packaging tools (also tested by make check).
DEB_PKG := dpkg-dev debhelper fakeroot lintian
# make image: the OCI image's tools, and podman to run it in the tests.
DEB_IMAGE := umoci podman runc
# The arm64 cross-build (make check-arm64): Debian's cross compiler, the
# arm64 -dev packages of the build dependencies and cmocka (multiarch:
# dpkg --add-architecture arm64), and qemu-user to run the unit tests.
DEB_CROSS := gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static
DEB_ARM64 := libmicrohttpd-dev:arm64 libgnutls28-dev:arm64 libsystemd-dev:arm64 \
	libjansson-dev:arm64 libinih-dev:arm64 libcrypt-dev:arm64 \
	libcmocka-dev:arm64 libbpf-dev:arm64 libyaml-dev:arm64
ARM64_UNPACK := libisal-dev:arm64 libisal2:arm64
DEBS := $(DEB_BUILD) $(DEB_TEST) $(DEB_PKG) $(DEB_IMAGE) $(DEB_CROSS) $(DEB_ARM64)
# dpkg-buildpackage gains root through fakeroot unless it has it.
DEB_ROOT_CMD = $(if $(filter 0,$(shell id -u)),,-rfakeroot)

.PHONY: check-one all run demo deps deps-build deps-demo deps-deb deps-image deps-kubectl check check-tests check-threads check-unit check-integration check-arm64 check-kernel manifests image \
	lint bench fuzz install uninstall deb clean FORCE

all: $(TOPDOWND) $(FAKEPMU)

$(TOPDOWND): $(DAEMON_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/daemon/%.o: daemon/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_INC) -c -o $@ $<

# The live page's style and script, compiled into page.o.
PAGE_ASSETS := daemon/render/page.css daemon/render/page.js
$(BUILD)/gen/page_assets.h: $(PAGE_ASSETS) build-aux/embed
	@mkdir -p $(@D)
	build-aux/embed page_style=daemon/render/page.css page_script=daemon/render/page.js >$@.tmp && mv $@.tmp $@
$(BUILD)/daemon/render/page.o: $(BUILD)/gen/page_assets.h
$(BUILD)/daemon/render/page.o: ALL_CFLAGS += -I$(BUILD)/gen

# Per-cgroup attribution: the BPF program, compiled for the BPF target and
# embedded as a libbpf skeleton (no compiler at run time).  Its object is
# the same for every architecture; the host's uapi headers serve.
BPF_CLANG ?= clang
HOST_MULTIARCH := $(shell gcc -print-multiarch 2>/dev/null)
$(BUILD)/gen/cgattr.bpf.o: daemon/cgroup/bpf/cgattr.bpf.c daemon/cgroup/cgacct.h
	@mkdir -p $(@D)
	$(BPF_CLANG) -g -O2 -target bpf -Wall -Werror -I/usr/include/$(HOST_MULTIARCH) -c -o $@ $<
$(BUILD)/gen/cgattr.skel.h: $(BUILD)/gen/cgattr.bpf.o
	bpftool gen skeleton $< name cgattr_bpf >$@.tmp && mv $@.tmp $@
$(BUILD)/daemon/cgroup/cgbpf.o: $(BUILD)/gen/cgattr.skel.h
$(BUILD)/daemon/cgroup/cgbpf.o: ALL_CFLAGS += -I$(BUILD)/gen

# The revision is compiled into version.o only; rebuild it when it changes.
$(BUILD)/revision.stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(VERSION) $(REVISION)' | cmp -s - $@ || echo '$(VERSION) $(REVISION)' > $@
$(BUILD)/daemon/lib/version.o: $(BUILD)/revision.stamp
$(BUILD)/daemon/lib/version.o: ALL_CFLAGS += -DTOPDOWND_VERSION='"$(VERSION)"' \
	-DTOPDOWND_REVISION='"$(REVISION)"'

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_INC) -o $@ $< $(LIB_OBJS) $(ALL_LDFLAGS) \
		$(shell $(PKG_CONFIG) --cflags --libs cmocka) $(LIBS)

# Test tools built against the daemon's objects (tests/tools/*.c), and
# perfprobe, which asks the perf ABI the same questions under the fake PMU
# and on a real kernel and shares nothing with the daemon (built alone,
# static for the arm64 guest).
PERFPROBE_SRC := tests/tools/perfprobe.c
TOOL_SRCS := $(filter-out $(PERFPROBE_SRC),$(wildcard tests/tools/*.c))
TOOL_BINS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRCS)) $(BUILD)/tests/tools/perfprobe

$(BUILD)/tests/tools/perfprobe: $(PERFPROBE_SRC)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARNINGS) -O2 -g $(SANFLAGS) -o $@ $<

$(BUILD)/tests/tools/%: tests/tools/%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_INC) -o $@ $< $(LIB_OBJS) $(ALL_LDFLAGS) $(LIBS)

# The fake PMU is test equipment: never sanitized (it is preloaded into
# sanitized daemons), built from its own sources only.
$(FAKEPMU): $(FAKEPMU_SRCS) $(wildcard tests/fakepmu/*.h)
	$(CC) -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -O2 -g -fPIC -shared \
		-DFAKEPMU_TABLES_DEFAULT='"$(abspath reference/perf-tables)"' \
		$(shell pkg-config --cflags jansson) -o $@ $(FAKEPMU_SRCS) \
		$(shell pkg-config --libs jansson) -ldl -lpthread -lm

# Preloaded test equipment beside the fake PMU (tests/shims: wallstep
# steps a program's wall clock), built alone, never sanitized.
SHIM_SRCS := $(wildcard tests/shims/*.c)
SHIMS := $(patsubst tests/shims/%.c,build/tests/shims/lib%.so,$(SHIM_SRCS))
build/tests/shims/lib%.so: tests/shims/%.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -O2 -g -fPIC -shared -o $@ $< -ldl

build/tests/fakepmu/%: tests/fakepmu/%.c $(wildcard tests/fakepmu/*.h)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -O2 -g -o $@ $< \
		$(shell pkg-config --cflags --libs cmocka jansson) -lm

# apt_install LIST: installs the Debian packages of LIST that are missing
# (a no-op when all are there), through sudo when not root; an arm64 one
# first adds the arm64 architecture to dpkg.
define apt_install
	@missing=; for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' \
			|| missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	echo "make $@: installing$$missing"; \
	sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	export DEBIAN_FRONTEND=noninteractive; \
	case "$$missing" in *:arm64*) \
		if ! dpkg --print-foreign-architectures | grep -qx arm64; then \
			echo "make $@: adding the arm64 architecture (dpkg --add-architecture) for the cross-build"; \
			$$sudo dpkg --add-architecture arm64 && $$sudo apt-get update; \
		fi;; \
	esac; \
	$$sudo apt-get install -y --no-install-recommends $$missing \
		|| { $$sudo apt-get update && \
		     $$sudo apt-get install -y --no-install-recommends $$missing; }
endef

# What `make run` needs to build the daemon; `make demo` the fake PMU too
# (the same libraries), python3 for its scenario, and curl and jq, which
# its examples use.
deps-build:
	$(call apt_install,$(DEB_BUILD))
deps-demo:
	$(call apt_install,$(DEB_BUILD) python3 curl jq)
# make deb: the build and the packaging tools (contrib/debian/control's
# Build-Depends); make image: those and the image's (debootstrap, setcap,
# umoci), not the test toolchain.
deps-deb:
	$(call apt_install,$(DEB_BUILD) $(DEB_PKG) systemd git)
deps-image:
	$(call apt_install,$(DEB_BUILD) $(DEB_PKG) systemd git debootstrap libcap2-bin util-linux umoci)

deps:
	$(call apt_install,$(DEBS))
	@[ -f $(ARM64_LIBDIR)/pkgconfig/libisal.pc ] || { \
		echo "make deps: unpacking $(ARM64_UNPACK) into $(ARM64_ROOT) for the cross-build"; \
		rm -rf $(ARM64_ROOT) && mkdir -p $(ARM64_ROOT)/debs && cd $(ARM64_ROOT)/debs && \
		{ apt-get download $(ARM64_UNPACK) || \
		  { sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; $$sudo apt-get update && \
		    apt-get download $(ARM64_UNPACK); }; } && \
		for d in *.deb; do dpkg-deb -x $$d $(ARM64_ROOT); done && \
		sed -i 's|^prefix=.*|prefix=$(ARM64_ROOT)/usr|' $(ARM64_LIBDIR)/pkgconfig/libisal.pc; }
	@tests/kernel/fetch $(KERNEL_DIR)
	@[ -d $(NPM_DIR)/node_modules/kubernetes-models ] || \
		npm install --no-audit --no-fund --prefix $(NPM_DIR) $(NPM_TEST)
	@# kubectl's kustomize builds the kube-prometheus-stack profile (44-kubernetes.t):
	@# the machine's own kubectl (these machines have Google's, kustomize v5),
	@# else Debian's kubernetes-client (which conflicts with it).
	@command -v kubectl >/dev/null || $(MAKE) --no-print-directory deps-kubectl
deps-kubectl:
	$(call apt_install,kubernetes-client)

# The Kubernetes API's and the Prometheus Operator's schemas, for
# tests/integration/44-kubernetes.t (the versions that run on Node.js 20).
NPM_DIR := build/npm
NPM_TEST := kubernetes-models@4.5.1 @kubernetes-models/prometheus-operator@4.4.4

# The manifests that carry other files (contrib/kubernetes/base/prometheusrule.yaml
# from the rules, dashboard.yaml from the dashboard).
manifests:
	build-aux/kube-manifests contrib/kubernetes/base

RUN_ADDR ?= 127.0.0.1:10412

# The README's first command: the real machine, the shipped config.  It
# installs what the build needs first (the build is a second make, so that
# pkg-config sees the packages just installed).
run: deps-build
	$(MAKE) $(TOPDOWND)
	$(TOPDOWND) -c config/topdownd.conf -l $(RUN_ADDR)

# Live numbers without a PMU: the Sapphire Rapids fixture under the fake
# PMU, workloads changing every 5 seconds.
demo: deps-demo
	$(MAKE) $(TOPDOWND) $(FAKEPMU)
	@mkdir -p build
	tests/scenarios/demo-scenario 5 >build/demo-scenario.json
	@echo "demo: open http://$(RUN_ADDR)/ in a browser (the live page)"
	@echo "      try  curl -s http://$(RUN_ADDR)/metrics | grep ratio"
	@echo "      and  curl -s 'http://$(RUN_ADDR)/api/v1/topdown?scope=package' | jq .packages"
	FAKEPMU_SYSFS=tests/fixtures/spr-2s FAKEPMU_SCENARIO=build/demo-scenario.json \
		LD_PRELOAD=$(abspath $(FAKEPMU)) \
		$(TOPDOWND) -c config/topdownd.conf --sysfs-root tests/fixtures/spr-2s -l $(RUN_ADDR)

# The test command: a fresh tree needs nothing but `make check`.  Inside
# it every prerequisite is there (make deps, root in CI): a test that
# lacks one fails instead of skipping (TOPDOWND_STRICT, tests/integration/lib.sh).
check: export TOPDOWND_STRICT := 1
# Each pass says how long it took (the README's figures come from these).
CHECK_PASSES := lint check-arm64 check-kernel check-tests SAN=1:check-tests SAN=thread:check-threads
check: deps
	@set -e; sum=; for p in $(CHECK_PASSES); do \
		t0=$$(date +%s); \
		case $$p in *:*) $(MAKE) $${p%%:*} $${p#*:};; *) $(MAKE) $$p;; esac; \
		sum="$$sum\n  $$p: $$(($$(date +%s) - t0)) s"; \
	done; printf "make check: every pass succeeded$$sum\n"

check-tests: all $(UNIT_BINS) $(TOOL_BINS) $(FAKEPMU_TEST_BINS) $(SHIMS) check-unit check-integration

check-unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

# The daemon and its unit tests built for arm64 and the unit tests run
# under qemu-user: nothing x86-specific outside the x86 tables.  The
# integration tests need the fake PMU, an x86 emulation: not here.
ifeq ($(CROSS),arm64)
check-arm64: $(TOPDOWND) $(UNIT_BINS)
	@readelf -h $(TOPDOWND) | grep -q 'Machine: *AArch64' || { echo "$(TOPDOWND) is not an arm64 binary"; exit 1; }
	@set -e; for t in $(UNIT_BINS); do echo "== qemu-aarch64-static $$t"; \
		FIXTURES=$(abspath tests/fixtures) LD_LIBRARY_PATH=$(ARM64_LIBDIR) \
		qemu-aarch64-static $$t; done
else
check-arm64:
	$(MAKE) CROSS=arm64 check-arm64
endif

# The kernel lane: Debian 12's arm64 kernel, busybox and perf (make deps
# fetches them into KERNEL_DIR), an initramfs with the arm64 daemon and
# perf, their libraries,
# a static perfprobe and the guest scripts; tests/kernel/lane.t boots it
# once under qemu-system-aarch64 and checks what it printed.
KERNEL_DIR := build/kernel
KERNEL_LIBDIRS := $(ARM64_LIBDIR) /usr/lib/aarch64-linux-gnu /lib/aarch64-linux-gnu \
	$(KERNEL_DIR)/perf-root/usr/lib/aarch64-linux-gnu $(KERNEL_DIR)/perf-root/lib/aarch64-linux-gnu
check-kernel: $(FAKEPMU) build/tests/tools/perfprobe
	$(MAKE) CROSS=arm64 build/arm64/topdownd
	@tests/kernel/fetch $(KERNEL_DIR)
	aarch64-linux-gnu-gcc -static -std=gnu11 $(WARNINGS) -O2 -o $(KERNEL_DIR)/perfprobe $(PERFPROBE_SRC)
	tests/kernel/mkinitramfs $(KERNEL_DIR)/initramfs.cpio.gz $(KERNEL_DIR)/busybox build/arm64/topdownd \
		$(KERNEL_DIR)/perfprobe $(KERNEL_DIR)/perf-root/usr/bin/perf $(KERNEL_LIBDIRS)
	$(TEST_ENV) KERNEL_DIR=$(abspath $(KERNEL_DIR)) TOOL_DIR=$(abspath build/tests/tools) prove -f tests/kernel/lane.t

TEST_ENV = TOPDOWND=$(abspath $(TOPDOWND)) FAKEPMU=$(abspath $(FAKEPMU)) \
	TESTBIN_DIR=$(abspath build/tests/fakepmu) FIXTURES=$(abspath tests/fixtures) \
	TOOL_DIR=$(abspath $(BUILD)/tests/tools) PERF_TABLES=$(abspath reference/perf-tables) \
	SHIM_DIR=$(abspath build/tests/shims) \
	SAN=$(SAN) ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1

# Three at a time on two cores: the tests wait on the daemon's intervals
# and leave the CPUs 60 % idle at two, and every test must hold on a
# loaded machine anyway.  Those
# that measure something system-wide run alone (36-cgroups.t counts the
# system's allocated files; 74-scrape-tail.t compares the daemon's and
# nginx's latency measured one after the other).
PROVE_JOBS ?= 3
SOLO_TESTS := tests/integration/36-cgroups.t tests/integration/74-scrape-tail.t
PROVE = prove -f --timer -j$(PROVE_JOBS)

check-integration: all $(TOOL_BINS) $(FAKEPMU_TEST_BINS) $(SHIMS)
	$(TEST_ENV) $(PROVE) $(filter-out $(SOLO_TESTS),$(INTEGRATION_TESTS))
	$(TEST_ENV) prove -f --timer $(filter $(SOLO_TESTS),$(INTEGRATION_TESTS))

# One integration test, verbose: make check-one T=tests/integration/30-http.t [SAN=1]
check-one: all $(TOOL_BINS) $(FAKEPMU_TEST_BINS) $(SHIMS)
	@[ -n "$(T)" ] || { echo "make check-one: say which test, T=tests/integration/NN-name.t" >&2; exit 2; }
	$(TEST_ENV) prove -v $(T)

# Under SAN=thread: every unit test, and the threaded integration tests.
check-threads: all $(UNIT_BINS) $(FAKEPMU_TEST_BINS) $(SHIMS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $(TEST_ENV) $$t; done
	$(TEST_ENV) $(PROVE) $(THREADED_TESTS)

# Benchmarks print figures; no test depends on timing.
bench: deps all
	tests/bench/run
	tests/bench/fleet-sizing --write docs/prometheus.md
	tests/bench/livepage --write docs/performance.md
	tests/bench/cgroups

FUZZ_SECONDS ?= 60
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run

lint:
	build-aux/check-layers daemon
	build-aux/gen-depth --check daemon/hw/depth_tables.c
	build-aux/gen-perfexpr --check daemon/hw/perfexpr_tables.c
	tests/bench/run --check-readme
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--std=c11 --inline-suppr -D_GNU_SOURCE --suppress=missingIncludeSystem \
		$(DAEMON_INC) daemon/

# The units name the installed paths; an existing config is never replaced.
DOCS := README.md LICENSE
# The guides: every docs/*.md but the next engineer's page.
USER_DOCS = $(filter-out docs/HACKING.md,$(wildcard docs/*.md))
CONTRIB := contrib/prometheus/prometheus.yml contrib/prometheus/prometheus-agent.yml \
	contrib/prometheus/prometheus-central.yml contrib/prometheus/rules.yml \
	contrib/grafana/topdownd.json contrib/systemd/cgroups.conf

install: $(TOPDOWND)
	install -D -m 0755 $(TOPDOWND) $(DESTDIR)$(SBINDIR)/topdownd
	install -D -m 0644 daemon/topdownd.8 $(DESTDIR)$(MANDIR)/man8/topdownd.8
	install -D -m 0644 daemon/topdownd.conf.5 $(DESTDIR)$(MANDIR)/man5/topdownd.conf.5
	install -d $(DESTDIR)$(UNITDIR)
	sed -e 's|/usr/local/sbin/topdownd|$(SBINDIR)/topdownd|' \
	    -e 's|/etc/topdownd/topdownd.conf|$(SYSCONFDIR)/topdownd/topdownd.conf|' \
	    systemd/topdownd.service >$(DESTDIR)$(UNITDIR)/topdownd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/topdownd.service
	install -m 0644 systemd/topdownd.socket $(DESTDIR)$(UNITDIR)/topdownd.socket
	install -d $(DESTDIR)$(DOCDIR)/contrib/prometheus $(DESTDIR)$(DOCDIR)/contrib/grafana \
		$(DESTDIR)$(DOCDIR)/contrib/systemd
	install -m 0644 $(DOCS) config/topdownd.conf $(DESTDIR)$(DOCDIR)/
	install -d $(DESTDIR)$(DOCDIR)/docs
	install -m 0644 $(USER_DOCS) $(DESTDIR)$(DOCDIR)/docs/
	for f in $(CONTRIB); do install -m 0644 $$f $(DESTDIR)$(DOCDIR)/$$f; done
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/topdownd/topdownd.conf ]; then \
		echo "install: keeping the existing $(DESTDIR)$(SYSCONFDIR)/topdownd/topdownd.conf"; \
	else \
		install -D -m 0644 config/topdownd.conf $(DESTDIR)$(SYSCONFDIR)/topdownd/topdownd.conf; \
	fi

# Everything install put there but the configuration, which may be edited.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/topdownd $(DESTDIR)$(MANDIR)/man8/topdownd.8 \
		$(DESTDIR)$(MANDIR)/man5/topdownd.conf.5 \
		$(DESTDIR)$(UNITDIR)/topdownd.service $(DESTDIR)$(UNITDIR)/topdownd.socket
	rm -rf $(DESTDIR)$(DOCDIR)
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/topdownd/topdownd.conf ]; then \
		echo "uninstall: keeping $(DESTDIR)$(SYSCONFDIR)/topdownd/topdownd.conf (remove it yourself)"; \
	fi

# The Debian package: the tree's tracked files with contrib/debian as debian/,
# built by dpkg-buildpackage into build/deb.  Its Maintainer (and the
# changelog's signature) is whoever builds it, by Debian's convention
# (DEBFULLNAME and DEBEMAIL, as dch reads them) when both are set; the
# project has no address of its own to put there.
deb: deps-deb
	rm -rf build/deb
	mkdir -p build/deb/topdownd-$(VERSION)
	git ls-files -z | tar --null -cf - -T - | tar -xf - -C build/deb/topdownd-$(VERSION)
	cp -r contrib/debian build/deb/topdownd-$(VERSION)/debian
	@if [ -n "$$DEBFULLNAME" ] && [ -n "$$DEBEMAIL" ]; then \
		who="$$DEBFULLNAME <$$DEBEMAIL>"; \
		sed -i "s|^Maintainer: .*|Maintainer: $$who|" build/deb/topdownd-$(VERSION)/debian/control && \
		sed -i "s|^ -- [^>]*>| -- $$who|" build/deb/topdownd-$(VERSION)/debian/changelog; \
	fi
	cd build/deb/topdownd-$(VERSION) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL dpkg-buildpackage -b -us -uc $(DEB_ROOT_CMD)
	@ls build/deb/*.deb

# An OCI image from the .deb (build-aux/mkimage says how), in build/image:
# the layout and topdownd-$(VERSION).oci.tar.  As root.
DEB_FILE = build/deb/topdownd_$(VERSION)_$(shell dpkg --print-architecture).deb
image: deps-image
	$(MAKE) deb
	build-aux/mkimage $(DEB_FILE) $(VERSION) build/image $(REVISION)

clean:
	rm -rf build daemon/topdownd $(FAKEPMU)

-include $(DAEMON_OBJS:.o=.d) $(UNIT_BINS:=.d) $(TOOL_BINS:=.d)
