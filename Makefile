# SPDX-License-Identifier: GPL-2.0
#
# pevt: kernel module + userspace tools.
#
#   make                 userspace tools, libpevt, tests; the module for the
#                        running kernel if its headers exist
#   make modules [KREL=<release>] [KDIR=<build tree>]
#   make check           host tests, then the VM suite on every test kernel
#   make demo            build, boot a VM per kernel, load pevt, show the A/B
#
# Output goes to build/; downloads and the debug kernel to $(PEVT_CACHE).

TOP        := $(CURDIR)
BUILD      := $(TOP)/build
PEVT_CACHE ?= $(BUILD)/cache
export PEVT_CACHE

# Module target: the running kernel if we can build for it, else 6.1.
KREL ?= $(shell r=$$(uname -r); if [ -d /lib/modules/$$r/build ]; then echo $$r; \
	  else . $(PEVT_CACHE)/kernels.env 2>/dev/null && echo $$KREL_6_1; fi)
KDIR ?= $(if $(wildcard /lib/modules/$(KREL)/build),/lib/modules/$(KREL)/build,/usr/src/linux-headers-$(KREL))
PEVT_PLANT ?=

CC       ?= gcc
CLANG    ?= clang
CFLAGS   ?= -O2 -g
CPPFLAGS += -D_GNU_SOURCE -I$(TOP)/include/uapi -I$(TOP)/user/lib/include -I$(TOP)/kmod
WARN     := -Wall -Wextra -Werror -Wno-unused-parameter
ALL_CFLAGS = -std=gnu11 $(CFLAGS) $(WARN)
TEST_CPPFLAGS = $(CPPFLAGS) -I$(TOP)/selftests -I$(PEVT_CACHE)/kselftest

LIB_SRCS  := $(sort $(wildcard user/lib/*.c) $(wildcard kmod/rotation.c))
LIB_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
LIBPEVT   := $(BUILD)/libpevt.a
PEVT_SRCS := $(sort $(wildcard user/pevt/*.c)) $(BUILD)/gen/help.c
TOOL_DIRS := $(filter-out lib pevt,$(notdir $(patsubst %/,%,$(dir $(wildcard user/*/*.c)))))
BINS      := $(if $(PEVT_SRCS),$(BUILD)/bin/pevt) $(patsubst %,$(BUILD)/bin/pevt-%,$(TOOL_DIRS))
HOST_TESTS := $(patsubst selftests/host/%_test.c,$(BUILD)/tests/host/%,$(wildcard selftests/host/*_test.c)) \
	      $(patsubst selftests/host/%_test.sh,$(BUILD)/tests/host/%.sh,$(wildcard selftests/host/*_test.sh))
VM_TESTS   := $(patsubst selftests/vm/%_test.c,$(BUILD)/tests/vm/%,$(wildcard selftests/vm/*_test.c)) \
	      $(patsubst selftests/vm/%_test.sh,$(BUILD)/tests/vm/%.sh,$(wildcard selftests/vm/*_test.sh))
HARNESS    := $(PEVT_CACHE)/kselftest/kselftest_harness.h
KSFT_LIBMK := $(PEVT_CACHE)/kselftest/lib.mk

VERSION   := 0.1
GIT_REV   := $(shell git -C $(TOP) describe --always --dirty 2>/dev/null)
FULL_VERSION := $(VERSION)$(if $(GIT_REV),+g$(GIT_REV))

# Manual pages: Documentation/man/NAME.S.md -> build/man/NAME.S (roff), and
# the --help texts of `pevt` and its commands (scripts/man.awk, mkhelp.sh).
MAN_SRCS  := $(sort $(wildcard Documentation/man/*.md))
MAN_PAGES := $(patsubst Documentation/man/%.md,$(BUILD)/man/%,$(MAN_SRCS))
HELP_SRCS := $(filter Documentation/man/pevt%.1.md,$(MAN_SRCS))

# What libpevt itself links: liburing (record's drain), libzstd
# (PERF_RECORD_COMPRESSED), libelf (symbols, build ids), libdw (DWARF
# unwinding of --call-graph dwarf samples), libiberty (C++
# demangling).
LIBPEVT_LIBS := -luring -lzstd -lelf -ldw -liberty -lm -pthread

# Extra libraries a test needs, from a "// LDLIBS: ..." line in its source.
ldlibs_of = $(shell sed -n 's|^// LDLIBS: ||p' $(1))

.PHONY: all user tests modules check host-check vm-check demo deps clean fuzz man \
	install install-user install-lib install-man install-dkms modules_install
all: user tests man $(if $(wildcard $(KDIR)/Makefile),modules)
user: $(LIBPEVT) $(BINS)
man: $(MAN_PAGES)

$(BUILD)/man/%: Documentation/man/%.md scripts/man.awk
	@mkdir -p $(dir $@)
	awk -v mode=man -f scripts/man.awk $< > $@.tmp && mv $@.tmp $@

# Regenerated when a page or the version changes.
$(BUILD)/gen/help.c: $(HELP_SRCS) scripts/man.awk scripts/mkhelp.sh FORCE
	@mkdir -p $(dir $@)
	@t=$$(mktemp $@.XXXXXX) && scripts/mkhelp.sh $$t '$(FULL_VERSION)' '$(BUILD)/man' $(HELP_SRCS) && \
	 if cmp -s $$t $@; then rm $$t; else mv $$t $@; fi
tests: $(HOST_TESTS) $(VM_TESTS)

deps:
	@$(TOP)/scripts/deps.sh

# One run of deps.sh makes both (a grouped target: with -j two runs fetched
# linux-source-6.1 at once, and one moved the other's .part away).
$(HARNESS) $(KSFT_LIBMK) &:
	@$(TOP)/scripts/deps.sh

$(BUILD)/obj/%.o: %.c $(wildcard include/uapi/linux/*.h user/lib/include/*/*.h kmod/rotation.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fvisibility=hidden -c -o $@ $<

$(LIBPEVT): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/pevt: $(PEVT_SRCS) $(LIBPEVT) $(wildcard user/pevt/*.h) | $(MAN_PAGES)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $(PEVT_SRCS) $(LIBPEVT) $(LIBPEVT_LIBS)

# each tool from its own directory's sources (no FORCE: a relink on every
# make would rewrite a binary another make's caller may be copying)
.SECONDEXPANSION:
$(BUILD)/bin/pevt-%: $(LIBPEVT) $$(wildcard user/$$*/*.c user/$$*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $(sort $(wildcard user/$*/*.c)) $(LIBPEVT) -lm -pthread

$(BUILD)/tests/host/%: selftests/host/%_test.c $(LIBPEVT) $(HARNESS) $(wildcard selftests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIBPEVT) $(call ldlibs_of,$<) -lm -pthread

# In-VM tests are static (the guest has nothing but busybox), built by
# selftests/Makefile through kselftest's lib.mk: the same binaries form a
# kselftest collection (make -C selftests kselftest_install ...).
$(BUILD)/tests/vm/%: selftests/vm/%_test.c $(LIBPEVT) $(HARNESS) $(KSFT_LIBMK) $(wildcard selftests/*.h) selftests/Makefile
	@$(MAKE) -s --no-print-directory -C selftests OUTPUT=$(BUILD)/tests/vm $@

$(BUILD)/tests/host/%.sh: selftests/host/%_test.sh
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

$(BUILD)/tests/vm/%.sh: selftests/vm/%_test.sh
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

# Out-of-tree builds write next to their sources, so each kernel gets its
# own copy of the tree: builds for 6.1, 6.12 and debug never mix objects.
MODDIR = $(BUILD)/kmod/$(KREL)$(if $(PEVT_PLANT),-plant-$(PEVT_PLANT))
modules:
	@test -f $(KDIR)/Makefile || { echo "error: no kernel build tree at $(KDIR) (make deps?)" >&2; exit 1; }
	@mkdir -p $(MODDIR)
	@rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' Kbuild $(MODDIR)/ && \
	 rsync -a --delete kmod include $(MODDIR)/ --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' --exclude '*.mod*' 
	$(MAKE) -C $(KDIR) M=$(MODDIR) W=1 $(if $(PEVT_PLANT),PEVT_PLANT=$(PEVT_PLANT)) modules
	@echo "module: $(MODDIR)/kmod/pevt.ko"

# ---- install -----------------------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=]   command, libpevt (shared,
#        versioned by user/lib/libpevt.map), headers, pkg-config, man pages,
#        bash completion
#   make install-dkms [DESTDIR=]    sources + dkms.conf in /usr/src/pevt-VERSION
#        (then: dkms add pevt/VERSION; dkms install pevt/VERSION)
#   make modules_install            pevt.ko for the running kernel (KREL)
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
LIB_SONAME := libpevt.so.0
LIB_SO     := $(BUILD)/libpevt.so.$(VERSION).0
LIB_PIC_OBJS := $(patsubst %.c,$(BUILD)/obj-pic/%.o,$(LIB_SRCS))

$(BUILD)/obj-pic/%.o: %.c $(wildcard include/uapi/linux/*.h user/lib/include/*/*.h kmod/rotation.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(LIB_SO): $(LIB_PIC_OBJS) user/lib/libpevt.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=user/lib/libpevt.map \
		-Wl,--no-undefined -o $@ $(LIB_PIC_OBJS) $(LIBPEVT_LIBS)

# Written at install time: it names PREFIX, LIBDIR and INCLUDEDIR.
PC_LINES := 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
	'Name: libpevt' 'Description: perf_event_open and /dev/pevt events, ring buffers, event lists' \
	'Version: $(VERSION)' 'Libs: -L$${libdir} -lpevt' 'Libs.private: $(LIBPEVT_LIBS)' \
	'Cflags: -I$${includedir}'

install: install-user install-lib install-man
install-user: user
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)/
	install -m 0644 scripts/pevt.bash-completion $(DESTDIR)$(BASHCOMPDIR)/pevt
install-lib: $(LIB_SO) $(LIBPEVT)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/pevt $(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIB_SO)) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libpevt.so
	install -m 0644 $(LIBPEVT) $(DESTDIR)$(LIBDIR)/
	install -m 0644 user/lib/include/pevt/*.h $(DESTDIR)$(INCLUDEDIR)/pevt/
	install -m 0644 include/uapi/linux/pevt.h $(DESTDIR)$(INCLUDEDIR)/linux/
	printf '%s\n' $(PC_LINES) > $(DESTDIR)$(PKGCONFIGDIR)/libpevt.pc
	$(if $(DESTDIR),,-ldconfig)
install-man: man
	@for p in $(MAN_PAGES); do s=$${p##*.}; \
		install -d $(DESTDIR)$(MANDIR)/man$$s && install -m 0644 $$p $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; done

DKMS_SRC := $(DESTDIR)/usr/src/pevt-$(VERSION)
install-dkms:
	install -d $(DKMS_SRC)
	rsync -a --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' --exclude '*.mod*' \
		Kbuild kmod include $(DKMS_SRC)/
	sed 's/@VERSION@/$(VERSION)/' dkms.conf > $(DKMS_SRC)/dkms.conf

modules_install: modules
	$(MAKE) -C $(KDIR) M=$(MODDIR) $(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) CONFIG_MODULE_SIG_ALL= modules_install
	$(if $(DESTDIR),,depmod -a $(KREL))

# check.sh installs the dependencies (deps.sh) and then builds: no
# prerequisites here, so that a fresh machine without a compiler works.
host-check:
	@$(TOP)/scripts/check.sh --host-only

check:
	@$(TOP)/scripts/check.sh

fuzz:
	@$(TOP)/selftests/fuzz/run.sh

demo:
	@$(TOP)/scripts/demo.sh

clean:
	rm -rf $(BUILD)/obj $(BUILD)/obj-pic $(BUILD)/libpevt.so* $(BUILD)/bin $(BUILD)/tests $(BUILD)/kmod $(BUILD)/vm $(BUILD)/gen $(BUILD)/man $(LIBPEVT)

FORCE:
