# SPDX-License-Identifier: MIT
# Builds the libFuzzer harnesses; used by tests/fuzz/run, from the
# repository root:   make -f tests/fuzz/fuzz.mk -j2 [FUZZ_BUILD=build/fuzz]
#
# Every daemon source but main.c is compiled once with clang, libFuzzer
# instrumentation, ASan and UBSan into an archive; each harness
# tests/fuzz/fuzz_<name>.c links against it, so the linker pulls in only
# the daemon objects that harness needs.  New harnesses and new daemon
# sources are picked up by the wildcards.

FUZZ_CC ?= clang
FUZZ_BUILD ?= build/fuzz
PKGS := libmicrohttpd libsystemd jansson inih zlib gnutls libbpf yaml-0.1

SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -std=gnu11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer $(SAN) \
	$(shell pkg-config --cflags $(PKGS))
# The project's warnings, without -Werror: clang's view of daemon/ is
# reported (build/fuzz/warnings.log), never fatal here.
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wcast-qual -Wformat=2
LIBS := $(shell pkg-config --libs $(PKGS)) -lcrypt -lpthread -lm

DAEMON_DIRS := daemon $(patsubst %/,%,$(sort $(dir $(wildcard daemon/*/*.c))))
DAEMON_INC := $(addprefix -I,$(DAEMON_DIRS))
DAEMON_SRCS := $(filter-out daemon/main.c,$(wildcard $(addsuffix /*.c,$(DAEMON_DIRS))))
DAEMON_OBJS := $(patsubst daemon/%.c,$(FUZZ_BUILD)/obj/%.o,$(DAEMON_SRCS))
ARCHIVE := $(FUZZ_BUILD)/libtopdownd-fuzz.a
HARNESS_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
HARNESS_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(HARNESS_SRCS))
FIXTURES := $(abspath tests/fixtures)

.PHONY: all
all: $(HARNESS_BINS)

$(FUZZ_BUILD)/obj/%.o: daemon/%.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $(DAEMON_INC) $(WARN) -MMD -MP -c -o $@ $< 2>$@.warn; \
		st=$$?; cat $@.warn >&2; exit $$st

# The live page's style and script (the Makefile's rule).
$(FUZZ_BUILD)/gen/page_assets.h: daemon/render/page.css daemon/render/page.js build-aux/embed
	@mkdir -p $(@D)
	@build-aux/embed page_style=daemon/render/page.css page_script=daemon/render/page.js >$@.tmp && mv $@.tmp $@
$(FUZZ_BUILD)/obj/render/page.o: $(FUZZ_BUILD)/gen/page_assets.h
$(FUZZ_BUILD)/obj/render/page.o: FUZZ_CFLAGS += -I$(FUZZ_BUILD)/gen

# The per-cgroup BPF program's skeleton (the Makefile's rule).
$(FUZZ_BUILD)/gen/cgattr.bpf.o: daemon/cgroup/bpf/cgattr.bpf.c daemon/cgroup/cgacct.h
	@mkdir -p $(@D)
	@clang -g -O2 -target bpf -I/usr/include/$$(gcc -print-multiarch) -c -o $@ $<
$(FUZZ_BUILD)/gen/cgattr.skel.h: $(FUZZ_BUILD)/gen/cgattr.bpf.o
	@bpftool gen skeleton $< name cgattr_bpf >$@.tmp && mv $@.tmp $@
$(FUZZ_BUILD)/obj/cgroup/cgbpf.o: $(FUZZ_BUILD)/gen/cgattr.skel.h
$(FUZZ_BUILD)/obj/cgroup/cgbpf.o: FUZZ_CFLAGS += -I$(FUZZ_BUILD)/gen

$(ARCHIVE): $(DAEMON_OBJS)
	@rm -f $@
	@ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(ARCHIVE)
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -Wall -Wextra $(DAEMON_INC) -MMD -MP -MF $@.d \
		-DFUZZ_FIXTURES='"$(FIXTURES)"' -o $@ $< $(ARCHIVE) $(LIBS)

-include $(DAEMON_OBJS:.o=.d) $(HARNESS_BINS:=.d)
