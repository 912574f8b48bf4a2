#!/bin/sh
# deps.sh [fuzz] -- install the Debian packages rooftune needs, if any is
# missing. Called by `make test`, `make demo`, `make bench` and `make asan`;
# `make fuzz` calls `deps.sh fuzz`, which adds clang with libFuzzer and the
# symbolizer for its reports. Does nothing (quickly) when everything is
# there. Installing needs root.
set -eu
PKGS="gcc make libc6-dev libjansson-dev libgsl-dev libcmocka-dev libpapi-dev libopenblas-dev libsqlite3-dev sqlite3 zlib1g-dev pkg-config gnuplot-nox valgrind python3-jsonschema python3-pytest ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo openmpi-bin libopenmpi-dev clang-16 binutils-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-user"
FUZZ_PKGS="clang-14 libclang-rt-14-dev llvm-14"
if [ "${1:-}" = fuzz ]; then PKGS="$PKGS $FUZZ_PKGS"; fi
missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
echo "rooftune: installing missing Debian packages:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "rooftune: not root: run 'apt-get install$missing' as root, then retry" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
