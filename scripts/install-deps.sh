#!/usr/bin/env bash
# Install what icemaint needs to build and test, from Debian's packages. Idempotent: installs only
# the packages that are missing, and runs `apt-get update` only when something must be installed.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev ccache groff-base
  libjansson-dev zlib1g-dev libdeflate-dev libzstd-dev libsnappy-dev libxxhash-dev libsqlite3-dev libpq-dev
  libcurl4-openssl-dev libssl-dev libexpat1-dev libyaml-dev libcmocka-dev
  postgresql python3-venv maven debootstrap
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# The Java interop judges need a JDK; any JDK on PATH will do (the machine image ships one).
if ! command -v javac >/dev/null 2>&1; then
  missing+=(default-jdk-headless)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
