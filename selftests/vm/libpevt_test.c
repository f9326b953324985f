// SPDX-License-Identifier: GPL-2.0
/* The libpevt evsel tests, run in the guest against the real pevt.ko. */
#include "../host/evsel_test.c"
