#!/bin/sh
# check_exports.sh LIBRARY: fail when the shared library exports a symbol that is not public
# API. Only `icm_` functions and data may be in its dynamic symbol table: `icm__` helpers (and
# anything else) are hidden (CMakeLists.txt: C_VISIBILITY_PRESET hidden, ICM_EXTERN marks the
# public ones). Run by ctest as `shared_exports` in builds with -DBUILD_SHARED_LIBS=ON.
set -eu
lib="$1"
syms="$(nm -D --defined-only "$lib" | awk '{ print $NF }')" || exit 1
if [ -z "$syms" ]; then
    echo "check_exports: $lib exports nothing (not a shared library?)" >&2
    exit 1
fi
bad="$(printf '%s\n' "$syms" | grep -v '^icm_' || true)"
internal="$(printf '%s\n' "$syms" | grep '^icm__' || true)"
if [ -n "$bad$internal" ]; then
    echo "check_exports: $lib exports symbols outside the public icm_ API:" >&2
    printf '%s\n' $bad $internal >&2
    exit 1
fi
echo "check_exports: $(printf '%s\n' "$syms" | wc -l) symbols, all icm_"
