# SPDX-License-Identifier: GPL-2.0
# Shared shell helpers; sourced, never run.
: "${top:?}"
export PEVT_CACHE=${PEVT_CACHE:-$top/build/cache}
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
