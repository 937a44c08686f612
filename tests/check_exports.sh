#!/bin/sh
# check_exports.sh LIBRARY SONAME HEADER...: the export-list test of the shared library. It
# fails when
#  - the library's soname is not SONAME (libicemaint.so.<SOVERSION>, from the one version in
#    include/icemaint/common.h);
#  - its dynamic symbol table holds a symbol that is not public API: only `icm_` functions and
#    data may be there; `icm__` helpers (and anything else) are hidden (CMakeLists.txt:
#    C_VISIBILITY_PRESET hidden, ICM_EXTERN marks the public ones);
#  - it does not export exactly the functions the HEADERs declare with ICM_EXTERN (a public
#    function missing from the library, or an exported one no header declares).
# Run by ctest as `shared_exports` in builds with -DBUILD_SHARED_LIBS=ON.
set -eu
lib="$1"
soname="$2"
shift 2
have_soname="$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
if [ "$have_soname" != "$soname" ]; then
    echo "check_exports: $lib has soname '$have_soname', want '$soname'" >&2
    exit 1
fi
syms="$(nm -D --defined-only "$lib" | awk '{ print $NF }' | sort -u)" || exit 1
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
# Declarations may wrap after the return type: join each header into one line first.
declared="$(for h in "$@"; do tr '\n' ' ' <"$h"; echo; done |
    grep -o 'ICM_EXTERN([^)]*) *icm_[A-Za-z0-9_]*' | sed 's/.*) *//' | sort -u)"
if [ -z "$declared" ]; then
    echo "check_exports: no ICM_EXTERN declaration found in: $*" >&2
    exit 1
fi
diff="$(printf '%s\n' "$declared" | { printf '%s\n' "$syms" | comm -3 - /dev/fd/3; } 3<&0 || true)"
if [ -n "$diff" ]; then
    echo "check_exports: exported (left) and declared (right) differ:" >&2
    printf '%s\n' "$diff" >&2
    exit 1
fi
echo "check_exports: $soname, $(printf '%s\n' "$syms" | wc -l) symbols, all icm_ and declared"
