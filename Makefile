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
PEVT_SRCS := $(sort $(wildcard user/pevt/*.c))
TOOL_DIRS := $(filter-out lib pevt,$(notdir $(patsubst %/,%,$(dir $(wildcard user/*/*.c)))))
BINS      := $(if $(PEVT_SRCS),$(BUILD)/bin/pevt) $(patsubst %,$(BUILD)/bin/pevt-%,$(TOOL_DIRS))
HOST_TESTS := $(patsubst selftests/host/%_test.c,$(BUILD)/tests/host/%,$(wildcard selftests/host/*_test.c))
VM_TESTS   := $(patsubst selftests/vm/%_test.c,$(BUILD)/tests/vm/%,$(wildcard selftests/vm/*_test.c)) \
	      $(patsubst selftests/vm/%_test.sh,$(BUILD)/tests/vm/%.sh,$(wildcard selftests/vm/*_test.sh))
HARNESS    := $(PEVT_CACHE)/kselftest/kselftest_harness.h

# Extra libraries a test needs, from a "// LDLIBS: ..." line in its source.
ldlibs_of = $(shell sed -n 's|^// LDLIBS: ||p' $(1))

.PHONY: all user tests modules check host-check vm-check demo deps clean fuzz
all: user tests $(if $(wildcard $(KDIR)/Makefile),modules)
user: $(LIBPEVT) $(BINS)
tests: $(HOST_TESTS) $(VM_TESTS)

deps:
	@$(TOP)/scripts/deps.sh

$(HARNESS):
	@$(TOP)/scripts/deps.sh

$(BUILD)/obj/%.o: %.c $(wildcard include/uapi/linux/*.h user/lib/include/*/*.h kmod/rotation.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fvisibility=hidden -c -o $@ $<

$(LIBPEVT): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/pevt: $(PEVT_SRCS) $(LIBPEVT) $(wildcard user/pevt/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $(PEVT_SRCS) $(LIBPEVT) -lzstd -lelf -liberty -lm -pthread

$(BUILD)/bin/pevt-%: $(LIBPEVT) FORCE
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $(sort $(wildcard user/$*/*.c)) $(LIBPEVT) -lm -pthread

$(BUILD)/tests/host/%: selftests/host/%_test.c $(LIBPEVT) $(HARNESS) $(wildcard selftests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIBPEVT) $(call ldlibs_of,$<) -lm -pthread

# In-VM tests are static: the guest has nothing but busybox.
$(BUILD)/tests/vm/%: selftests/vm/%_test.c $(LIBPEVT) $(HARNESS) $(wildcard selftests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CPPFLAGS) $(ALL_CFLAGS) -static -o $@ $< $(LIBPEVT) $(call ldlibs_of,$<) -lm -pthread

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

host-check: $(HOST_TESTS)
	@$(TOP)/scripts/check.sh --host-only

check:
	@$(TOP)/scripts/check.sh

fuzz:
	@$(TOP)/selftests/fuzz/run.sh

demo:
	@$(TOP)/scripts/demo.sh

clean:
	rm -rf $(BUILD)/obj $(BUILD)/bin $(BUILD)/tests $(BUILD)/kmod $(BUILD)/vm $(LIBPEVT)

FORCE:
