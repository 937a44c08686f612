#!/usr/bin/env bash
# THE test command (README "Quick start"; .ci/run calls exactly this). On a fresh machine it
# installs what is missing, builds and runs every test:
#   1. scripts/install-deps.sh                 Debian packages (idempotent)
#   2. scripts/setup-python.sh (if present)    the test virtualenv (build/venv)
#   3. build/      RelWithDebInfo, -Werror     ctest: every test
#   4. build-asan/ Debug, ASan+UBSan           ctest: labels unit and fuzz-replay
#   4a. build-tsan/ RelWithDebInfo, TSan       the unit tests labelled threads only
#   4b. build-shared/ -DBUILD_SHARED_LIBS=ON   build only, plus the exports check (ctest
#                                              shared_exports); its full ctest adds ~3.5 min
#   4c. build-types/<cc>-<type>/               GCC and clang, every CMAKE_BUILD_TYPE, -Werror
#   4d. build-install-{shared,static}/         Release, no tests: cmake --install into a
#                                              prefix, tests/consumer built against it through
#                                              pkg-config and find_package, and run
#   4e. build-install-static/deb/              cpack -G DEB: Depends, contents, and the
#                                              packaged icemaint runs (dpkg-deb -x)
#   4f. a clean Debian root (debootstrap)      the .deb installed there with apt-get, run,
#                                              and purged (needs root)
#   5. pytest tests/py and tests/interop (if present) with the venv's python
# with a throw-away PostgreSQL for the catalog tests unless ICM_PG_DSN names one already, and
# the S3 test servers (scripts/start-s3.sh) unless ICM_TEST_S3_ENDPOINT names them already, and
# the REST catalog fixture (scripts/start-rest.sh) unless ICM_TEST_REST_URI names it already.
# Every stage runs even when an earlier test stage failed, so one run shows everything that is
# broken; the exit status is non-zero if any stage failed. A build that fails skips the tests
# that need it. Environment: ICM_JOBS (default 2: the machines have two cores).
set -uo pipefail
# (so a test reads text from a here-string, never `printf | grep -q`: grep -q exits at its
# first match, and a writer still writing then dies of SIGPIPE, failing the pipeline)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="${ICM_JOBS:-2}"
export ICM_VENV="${ICM_VENV:-build/venv}"
case "$ICM_VENV" in /*) VENV="$ICM_VENV" ;; *) VENV="$ROOT/$ICM_VENV" ;; esac

passed=()
failed=()
skipped=()

# stage NAME COMMAND...: run one stage and record its outcome.
stage() {
  local name="$1"
  shift
  echo "==> test.sh: $name" >&2
  if "$@"; then
    passed+=("$name")
    return 0
  fi
  echo "==> test.sh: $name FAILED" >&2
  failed+=("$name")
  return 1
}

summary() {
  echo
  if [ ${#failed[@]} -eq 0 ]; then
    echo "test.sh: OK: ${#passed[@]} stages passed (${passed[*]})${skipped:+; skipped: ${skipped[*]}}"
  else
    echo "test.sh: FAILED: ${failed[*]} (passed: ${passed[*]:-none}${skipped:+; skipped: ${skipped[*]}})"
  fi
}

# Every build has -Werror (ICM_WERROR is off by default, for packagers) and goes through ccache
# when it is installed, so the builds of one run and of the next share their objects.
configure_and_build() {
  local dir="$1" launcher=()
  shift
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$ROOT" -B "$ROOT/$dir" -G Ninja -DICM_WERROR=ON "${launcher[@]}" "$@" >/dev/null &&
    ninja -C "$ROOT/$dir" -j "$JOBS"
}

# One pytest run per suite (each test file runs once per test.sh run; ctest runs no Python
# test), listing every skip with its reason (-rs; under CI a skip fails:
# tests/tools/ci_skip_policy.py). A suite that collects nothing (exit 5) fails: it proves nothing.
run_pytest() {
  local dir="$1" rc=0
  "$VENV/bin/python" -m pytest -q -rs "$dir" || rc=$?
  if [ "$rc" -eq 5 ]; then
    echo "test.sh: $dir collected no test" >&2
  fi
  return "$rc"
}

if ! stage install-deps ./scripts/install-deps.sh; then
  summary
  exit 1
fi

have_venv=0
if [ -x scripts/setup-python.sh ] || [ -f scripts/setup-python.sh ]; then
  stage setup-python bash scripts/setup-python.sh && have_venv=1
else
  skipped+=("setup-python")
fi

# PostgreSQL for the SQL catalog tests: .ci/run starts one and exports ICM_PG_DSN; run by hand,
# this script starts a throw-away server itself (in /tmp: the `postgres` user must reach it) and
# stops it on exit, so a plain ./scripts/test.sh runs those tests too.
PG_DIR=""
S3_DIR=""
REST_DIR=""
stop_services() {
  # The REST fixture first: its S3 warehouse is on the S3 server.
  if [ -n "$REST_DIR" ]; then
    ./scripts/start-rest.sh --stop "$REST_DIR" >/dev/null 2>&1 || true
    rm -rf "$REST_DIR"
  fi
  if [ -n "$PG_DIR" ]; then
    ./scripts/start-postgres.sh --stop "$PG_DIR" >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
  fi
  if [ -n "$S3_DIR" ]; then
    ./scripts/start-s3.sh --stop "$S3_DIR" >/dev/null 2>&1 || true
    rm -rf "$S3_DIR"
  fi
}
trap stop_services EXIT
start_postgres() {
  PG_DIR="$(mktemp -d /tmp/icm-test-pg.XXXXXX)" &&
    ICM_PG_DSN="$(./scripts/start-postgres.sh "$PG_DIR")" &&
    export ICM_PG_DSN
}
if [ -z "${ICM_PG_DSN:-}" ] && [ -f scripts/start-postgres.sh ]; then
  stage postgres start_postgres
fi

# The S3 servers (moto, versitygw, fault proxies; README "S3 test servers"): .ci/run starts them
# and exports ICM_TEST_S3_*; run by hand, this script starts its own and stops them on exit.
# Under CI it never does: there a missing server must fail the S3 tests, not be papered over.
start_s3() {
  S3_DIR="$(mktemp -d /tmp/icm-test-s3.XXXXXX)" &&
    ./scripts/start-s3.sh "$S3_DIR" >/dev/null &&
    . "$S3_DIR/env"
}
if [ -z "${ICM_TEST_S3_ENDPOINT:-}" ] && [ -z "${CI:-}" ] && [ "$have_venv" -eq 1 ]; then
  stage s3-servers start_s3
fi

# The REST catalog fixture (README "REST catalog test servers"), after the S3 servers (one of its
# warehouses is on moto): .ci/run starts it and exports ICM_TEST_REST_*; run by hand, this script
# starts its own and stops it on exit; under CI never (a missing fixture must fail the tests).
start_rest() {
  REST_DIR="$(mktemp -d /tmp/icm-test-rest.XXXXXX)" &&
    ICM_PYTHON="$VENV/bin/python" ./scripts/start-rest.sh "$REST_DIR" >/dev/null &&
    . "$REST_DIR/env"
}
if [ -z "${ICM_TEST_REST_URI:-}" ] && [ -z "${CI:-}" ] && [ "$have_venv" -eq 1 ]; then
  stage rest-servers start_rest
fi

# Tests find the tools and data through the environment (tests/unit/testutil.c, tests/py).
export ICM_FIXTURES_DIR="${ICM_FIXTURES_DIR:-$(cd "$ROOT/.." && pwd)/shared/fixtures}"
export ICM_BUILD_DIR="$ROOT/build"
export ICM_CLI="$ROOT/build/icemaint"

built=0
if stage build configure_and_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo; then
  built=1
  stage ctest ctest --test-dir build --output-on-failure -j "$JOBS"
else
  skipped+=("ctest")
fi

# The ASan build runs its own CLI binary in the CLI tests (ctest sets ICM_CLI per build).
if stage build-asan configure_and_build build-asan -DCMAKE_BUILD_TYPE=Debug -DICM_SANITIZE=ON; then
  stage ctest-asan ctest --test-dir build-asan --output-on-failure -j "$JOBS" -L 'unit|fuzz-replay'
else
  skipped+=("ctest-asan")
fi

# ThreadSanitizer (it cannot share a build with ASan): the unit tests that run the library on
# several threads (label `threads`, tests/CMakeLists.txt: the planners' read-ahead and
# listing-ahead, the parallel loop, the delete engine), and only they are built (the library
# and eleven tests: about 2 min on two cores, then about 40 s of tests). Any report fails the
# test (TSAN_OPTIONS halt_on_error; tests/tsan.supp holds only third-party false positives).
build_tsan() {
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$ROOT" -B "$ROOT/build-tsan" -G Ninja -DICM_WERROR=ON "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DICM_TSAN=ON -DICM_BUILD_BENCH=OFF >/dev/null &&
    ninja -C "$ROOT/build-tsan" -j "$JOBS" icm_thread_tests
}
if stage build-tsan build_tsan; then
  stage ctest-tsan ctest --test-dir build-tsan --output-on-failure -j "$JOBS" -L threads
else
  skipped+=("ctest-tsan")
fi

# The shared library must link, and export only `icm_` symbols. Build only (about 85 s on two
# cores): its unit tests link the same objects statically (icemaint_internal), so running them
# again would mostly repeat the first build's; the exports check takes well under a second.
if stage build-shared configure_and_build build-shared -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBUILD_SHARED_LIBS=ON; then
  stage shared-exports ctest --test-dir build-shared --output-on-failure -R '^shared_exports$'
else
  skipped+=("shared-exports")
fi

# Every build type (Debug, Release, RelWithDebInfo, MinSizeRel) with GCC and with clang builds
# with -Werror: GCC's flow warnings (format truncation, maybe-uninitialized) change with the
# optimisation level, and clang warns where GCC does not. The library, CLI and benchmarks only
# (BUILD_TESTING=OFF: about 10 s each), plus clang's build of the tests in RelWithDebInfo, which
# is also the build without the optional features (ICM_WITH_POSTGRES=OFF, ICM_WITH_YAML=OFF)
# and runs test_built_without there: their refusals.
build_types() {
  local cc bt extra rc=0
  for cc in gcc clang; do
    for bt in Debug Release RelWithDebInfo MinSizeRel; do
      extra=(-DBUILD_TESTING=OFF)
      if [ "$cc-$bt" = clang-RelWithDebInfo ]; then
        extra=(-DBUILD_TESTING=ON -DICM_WITH_POSTGRES=OFF -DICM_WITH_YAML=OFF)
      fi
      echo "test.sh: build-types: $cc $bt ${extra[*]}" >&2
      mkdir -p build-types
      if ! configure_and_build "build-types/$cc-$bt" -DCMAKE_C_COMPILER="$cc" \
          -DCMAKE_BUILD_TYPE="$bt" "${extra[@]}" >"build-types/$cc-$bt.log" 2>&1; then
        grep -E -A5 'error|warning' "build-types/$cc-$bt.log" | head -60 >&2
        echo "test.sh: build-types: $cc $bt FAILED (log: build-types/$cc-$bt.log)" >&2
        rc=1
      fi
    done
  done
  if [ -f build-types/clang-RelWithDebInfo/build.ninja ]; then
    ctest --test-dir build-types/clang-RelWithDebInfo --output-on-failure \
      -R '^test_built_without$' || rc=1
  fi
  return "$rc"
}
stage build-types build_types

# What a packager does and what a user then does: a Release build without tests, installed with
# `cmake --install` into a fresh prefix, then tests/consumer/consumer.c built against that prefix
# and run, once through pkg-config and once through CMake's find_package(icemaint); for the
# shared library (pkg-config --libs) and for the static one (pkg-config --static: the
# Requires.private and Libs.private must be complete).
install_consumer() {
  local kind="$1" shared=OFF static="" dir prefix pc
  [ "$kind" = shared ] && shared=ON
  [ "$kind" = static ] && static=--static
  dir="build-install-$kind"
  configure_and_build "$dir" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    -DICM_BUILD_BENCH=OFF -DBUILD_SHARED_LIBS="$shared" >/dev/null || return 1
  prefix="$ROOT/$dir/prefix"
  rm -rf "$prefix" "$ROOT/$dir/consumer"
  mkdir -p "$ROOT/$dir/consumer"
  cmake --install "$ROOT/$dir" --prefix "$prefix" >/dev/null || return 1
  pc="$(find "$prefix" -name icemaint.pc)"
  [ -n "$pc" ] || { echo "test.sh: install-$kind: no icemaint.pc installed" >&2; return 1; }
  # pkg-config: the file is relocatable (${pcfiledir}), nothing but PKG_CONFIG_PATH points at it.
  # Static: `pkg-config --static` would also take every dependency's own Libs.private, and
  # Debian's libpq.pc names archives libpq-dev does not ship (-lpgcommon -lpgport), so the
  # static link is what `--static` means one level deep: icemaint's Libs and Libs.private and
  # its Requires.private modules' Libs, every one of them taken from the installed file.
  local flags
  flags="$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs icemaint)" || return 1
  if [ -n "$static" ]; then
    flags="$flags $(pkg-config --libs $(PKG_CONFIG_PATH="$(dirname "$pc")" \
      pkg-config --print-requires-private icemaint)) $(sed -n 's/^Libs\.private: //p' "$pc")" ||
      return 1
  fi
  # shellcheck disable=SC2086
  cc -std=c11 -Wall -Werror -o "$ROOT/$dir/consumer/consumer-pc" tests/consumer/consumer.c \
    $flags || return 1
  LD_LIBRARY_PATH="$(dirname "$(dirname "$pc")")" "$ROOT/$dir/consumer/consumer-pc" || return 1
  # find_package: CMAKE_PREFIX_PATH only.
  cmake -S tests/consumer -B "$ROOT/$dir/consumer/cmake" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
    ninja -C "$ROOT/$dir/consumer/cmake" >/dev/null &&
    "$ROOT/$dir/consumer/cmake/consumer" || return 1
  # The generated man pages and bash completion are installed where man and bash look.
  for f in share/man/man1/icemaint.1 share/man/man1/icemaint-expire-snapshots.1 \
      share/bash-completion/completions/icemaint share/fish/vendor_completions.d/icemaint.fish \
      share/zsh/site-functions/_icemaint; do
    [ -s "$prefix/$f" ] || { echo "test.sh: install-$kind: $f not installed" >&2; return 1; }
  done
  # The installed tool runs as installed: a shared build's finds libicemaint.so by its RPATH.
  local out
  out="$(env -u LD_LIBRARY_PATH "$prefix/bin/icemaint" --version)" ||
    { echo "test.sh: install-$kind: the installed icemaint does not run: $out" >&2; return 1; }
  if [ "$kind" = shared ]; then
    # Both consumers load the installed shared library, by its soname.
    for exe in consumer/consumer-pc consumer/cmake/consumer; do
      grep -q 'NEEDED.*\[libicemaint\.so\.[0-9.]*\]' <<<"$(readelf -d "$ROOT/$dir/$exe")" || {
        echo "test.sh: install-shared: $exe does not link libicemaint.so by soname" >&2
        return 1
      }
    done
  fi
}
stage install-consumer-shared install_consumer shared
stage install-consumer-static install_consumer static

# A .deb (CPack) of that static Release build: its Depends name the runtime libraries
# (dpkg-shlibdeps), it holds the tool, library, headers, pkg-config and CMake files, man pages
# and completion, and the packaged icemaint runs (--version, and inspect on a metadata file).
# Extracted with dpkg-deb -x rather than installed, so the machine's /usr stays as it was.
package_deb() {
  local dir="$ROOT/build-install-static" deb root version out f contents depends
  [ -f "$dir/build.ninja" ] || return 1
  rm -rf "$dir/deb"
  (cd "$dir" && cpack -G DEB -B deb >/dev/null) || return 1
  deb="$(ls "$dir"/deb/icemaint_*.deb)" || return 1
  depends="$(dpkg-deb -f "$deb" Depends)" || return 1
  for f in libc6 libjansson4 libcurl4 libpq5 libyaml-0-2; do
    grep -q "$f" <<<"$depends" ||
      { echo "test.sh: package-deb: Depends lacks $f" >&2; return 1; }
  done
  contents="$(dpkg-deb -c "$deb")" || return 1
  for f in usr/bin/icemaint usr/lib/libicemaint.a usr/lib/pkgconfig/icemaint.pc \
      usr/lib/cmake/icemaint/icemaintConfig.cmake usr/include/icemaint/common.h \
      usr/share/man/man1/icemaint.1 usr/share/bash-completion/completions/icemaint; do
    grep -q " \./$f\$" <<<"$contents" ||
      { echo "test.sh: package-deb: $f not in the package" >&2; return 1; }
  done
  root="$(mktemp -d /tmp/icm-deb.XXXXXX)"
  dpkg-deb -x "$deb" "$root" || { rm -rf "$root"; return 1; }
  version="$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$dir/CMakeCache.txt")"
  out="$("$root/usr/bin/icemaint" --version)"
  if [ "$out" != "icemaint $version" ]; then
    echo "test.sh: package-deb: --version printed '$out', want 'icemaint $version'" >&2
    rm -rf "$root"
    return 1
  fi
  out="$("$root/usr/bin/icemaint" inspect tests/consumer/v1.metadata.json)" &&
    grep -q '^Table UUID  *9c12d441-03fe-4693-9a96-a0705ddf69c1$' <<<"$out" || {
    echo "test.sh: package-deb: the packaged icemaint inspect failed: $out" >&2
    rm -rf "$root"
    return 1
  }
  rm -rf "$root"
  echo "test.sh: package-deb: $(basename "$deb") OK" >&2
}
stage package-deb package_deb

# The .deb installed for real, on a clean Debian: a minimal root (debootstrap --variant=minbase)
# of this machine's release from the Debian mirror its apt already uses, with its apt sources
# (release, -updates, -security). `apt-get install ./icemaint_*.deb` there must pull every
# library the package's Depends name and nothing else is present to hide a missing one; then
# the installed icemaint prints its version and inspects a metadata file, and `apt-get purge`
# removes it. The root is made once per build directory (about a minute) and kept pristine as
# a tar file, so each run starts from the same clean system; it is never the machine's own /usr.
# Needs root (debootstrap, chroot): skipped without it, except under CI, where it fails.
deb_clean_install() {
  local dir="$ROOT/build-install-static" deb cache root suite mirror out rc=0
  deb="$(ls "$dir"/deb/icemaint_*.deb 2>/dev/null)" ||
    { echo "test.sh: deb-install: no package (stage package-deb)" >&2; return 1; }
  # shellcheck disable=SC1091
  suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
  local sources
  sources="$(apt-get indextargets --format 'deb $(REPO_URI) $(RELEASE) $(COMPONENT)' \
    'Created-By: Packages' | sort -u | grep -E " $suite(-updates|-security)? main\$")"
  mirror="$(printf '%s\n' "$sources" | awk -v s="$suite" '$3 == s { print $2; exit }')"
  [ -n "$suite" ] && [ -n "$mirror" ] ||
    { echo "test.sh: deb-install: no Debian mirror for '$suite' in apt's sources" >&2; return 1; }
  cache="$dir/debroot-$suite.tar"
  if [ ! -f "$cache" ]; then
    root="$(mktemp -d /tmp/icm-debootstrap.XXXXXX)" && chmod 755 "$root"
    if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
        ! tar -cf "$cache.part" -C "$root" .; then
      echo "test.sh: deb-install: debootstrap $suite $mirror failed (log: $dir/debootstrap.log)" >&2
      rm -rf --one-file-system "$root" "$cache.part"
      return 1
    fi
    mv "$cache.part" "$cache"
    rm -rf --one-file-system "$root"
  fi
  root="$(mktemp -d /tmp/icm-debroot.XXXXXX)"
  tar -xf "$cache" -C "$root" || { rm -rf --one-file-system "$root"; return 1; }
  chmod 755 "$root" # apt's download user (_apt) must reach the root's lists
  printf '%s\n' "$sources" >"$root/etc/apt/sources.list"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  cp "$deb" tests/consumer/v1.metadata.json "$root/tmp/"
  local version
  version="$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$dir/CMakeCache.txt")"
  {
    chroot "$root" apt-get update -qq &&
      chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "/tmp/$(basename "$deb")" >"$dir/deb-install.log" 2>&1 ||
      { echo "test.sh: deb-install: apt-get install failed (log: $dir/deb-install.log)" >&2; false; }
  } &&
    out="$(chroot "$root" icemaint --version)" &&
    { [ "$out" = "icemaint $version" ] ||
      { echo "test.sh: deb-install: --version printed '$out'" >&2; false; }; } &&
    out="$(chroot "$root" icemaint inspect /tmp/v1.metadata.json)" &&
    { grep -q '^Table UUID  *9c12d441-03fe-4693-9a96-a0705ddf69c1$' <<<"$out" ||
      { echo "test.sh: deb-install: inspect printed: $out" >&2; false; }; } &&
    chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq icemaint \
      >>"$dir/deb-install.log" 2>&1 &&
    { [ ! -e "$root/usr/bin/icemaint" ] ||
      { echo "test.sh: deb-install: purge left /usr/bin/icemaint" >&2; false; }; } || rc=1
  rm -rf --one-file-system "$root"
  [ "$rc" -eq 0 ] && echo "test.sh: deb-install: $(basename "$deb") installed, ran and purged" \
    "on a clean Debian $suite" >&2
  return "$rc"
}
if [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null; then
  stage deb-install deb_clean_install
elif [ -n "${CI:-}" ]; then
  stage deb-install sh -c 'echo "test.sh: deb-install needs root and debootstrap under CI" >&2; false'
else
  echo "test.sh: deb-install skipped: it needs root and debootstrap (chroot)" >&2
  skipped+=("deb-install")
fi

for suite in tests/py tests/interop; do
  if [ ! -d "$suite" ]; then
    continue
  fi
  # The Python suites drive build/icemaint: after a failed build it would be a stale binary.
  if [ "$have_venv" -ne 1 ] || [ "$built" -ne 1 ]; then
    skipped+=("pytest:$suite")
    continue
  fi
  stage "pytest:$suite" run_pytest "$suite"
done

summary
[ ${#failed[@]} -eq 0 ]
