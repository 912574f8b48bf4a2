#!/bin/sh
# device-bundle.sh BUILD BUNDLE -- assemble the folder that carries rooftune
# to the GPU machine (Ubuntu 24.04, glibc 2.39, libsqlite3 and the CUDA 13
# driver and toolkit there; nothing can be installed) and check it. `make
# device-bundle` links BUILD/bundle-link/rooftune and its tests with the
# run path $ORIGIN/../lib (DT_RPATH: it also serves the libraries' own
# dependencies, libpapi's libpfm) and then calls this.
#
# The bundle, relative to its root (the project root as rooftune sees it:
# bin/rooftune finds its space files at bin/../REL, see rt_project_path):
#   bin/rooftune          stripped of debug information
#   lib/                  every shared library the programs need that is not
#                         glibc's, libstdc++/libgcc_s, libz or libsqlite3
#   targets/*/*.json      the kernels' space files
#   cost_model/cm_shim512.h   read by the cachegrind counter path
#   tests/test_*          the test programs linked in BUILD/bundle-link/tests
#                         (the Makefile's BUNDLE_TEST_NAMES: those the GPU
#                         phases run), tests/data, the emulator's headers
#                         tests/cuda_emu/*.h
#   search_spaces/examples    spaces the tests load
#   data/                 the public T1/T4 files (the tests read them)
#   scripts/run-tests     the test runner
#   rooftune              runs bin/rooftune (the tests find BUILD/rooftune)
#   run                   `run rooftune ARGS`, `run tests [NAME...]`, `run check`
# Checks: every library the loader resolves is the bundle's or one of the
# allowed system ones; bin/rooftune targets runs from another directory;
# the size (under 30 MB, the device tool carries 64 MiB in all).
set -eu
build=${1:?usage: device-bundle.sh BUILD BUNDLE}
bundle=${2:?usage: device-bundle.sh BUILD BUNDLE}
link="$build/bundle-link"
[ -x "$link/rooftune" ] || { echo "device-bundle: $link/rooftune missing (run make device-bundle)" >&2; exit 1; }

# Libraries the GPU machine has: glibc's, the C++ runtime, zlib, SQLite.
system_lib() {
  case "$1" in
    linux-vdso.so.*|ld-linux*.so.*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*) return 0 ;;
    libresolv.so.*|libutil.so.*|libstdc++.so.*|libgcc_s.so.*|libz.so.*|libsqlite3.so.*) return 0 ;;
  esac
  return 1
}

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/tests" "$bundle/scripts" "$bundle/cost_model"
strip --strip-debug -o "$bundle/bin/rooftune" "$link/rooftune"
for t in "$link"/tests/test_*; do
  [ -x "$t" ] || continue
  n=$(basename "$t")
  [ "$n" = test_install ] && continue
  strip --strip-debug -o "$bundle/tests/$n" "$t"
done

# Files read relative to the project root (rooftune) or the working
# directory (the tests, run from the bundle's root).
for f in targets/*/*.json; do
  mkdir -p "$bundle/$(dirname "$f")"
  cp "$f" "$bundle/$f"
done
cp cost_model/cm_shim512.h "$bundle/cost_model/"
cp -r tests/data "$bundle/tests/data"
cp -r data "$bundle/data"                          # the public T1/T4 files the tests read
mkdir -p "$bundle/tests/cuda_emu"
cp tests/cuda_emu/*.h "$bundle/tests/cuda_emu/"   # the tests' CPU emulator (needs g++)
mkdir -p "$bundle/search_spaces"
cp -r search_spaces/examples "$bundle/search_spaces/examples"
cp scripts/run-tests "$bundle/scripts/run-tests"

# Shared libraries: what ldd resolves here, minus the system's.
for e in "$bundle/bin/rooftune" "$bundle"/tests/test_*; do
  [ -f "$e" ] || continue
  env -u LD_LIBRARY_PATH ldd "$e" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  system_lib "$name" && continue
  [ -f "$bundle/lib/$name" ] || cp -L "$path" "$bundle/lib/$name"
done
chmod 644 "$bundle"/lib/* 2>/dev/null || true

cat > "$bundle/rooftune" <<'EOF'
#!/bin/sh
# The tests run BUILD/rooftune (next to their tests/ folder): this one.
exec "$(dirname "$0")/bin/rooftune" "$@"
EOF
cat > "$bundle/run" <<'EOF'
#!/bin/sh
# run -- rooftune from this bundle (made by `make device-bundle`), from any
# directory:
#   run rooftune ARGS...   bin/rooftune ARGS (e.g. run rooftune bench --target cuda:0)
#   run tests [NAME...]    the test programs (all, or those named, e.g.
#                          test_gd test_cm_bench_cuda) from the bundle's root;
#                          tests read data/ (copied into the bundle)
#   run check              what the loader resolves for every program
# The bundle's lib/ is on the run path of each program; it is also put on
# LD_LIBRARY_PATH for what they start.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  rooftune) exec "$here/bin/rooftune" "$@" ;;
  tests) cd "$here" && exec sh scripts/run-tests . "$@" ;;
  check)
    bad=0
    for e in "$here/bin/rooftune" "$here"/tests/test_*; do
      [ -f "$e" ] || continue
      out=$(env -u LD_LIBRARY_PATH ldd "$e" 2>&1) || { echo "$e: ldd failed: $out"; bad=1; continue; }
      if printf '%s\n' "$out" | grep -q 'not found'; then
        echo "$e:"; printf '%s\n' "$out" | grep 'not found'; bad=1
      fi
    done
    [ "$bad" -eq 0 ] && echo "every library resolves"
    exit "$bad" ;;
  *) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
EOF
chmod 755 "$bundle/rooftune" "$bundle/run" "$bundle/scripts/run-tests"

# ---- Checks ----
fail() { echo "device-bundle: $*" >&2; exit 1; }
abs=$(cd "$bundle" && pwd)
for e in "$bundle/bin/rooftune" "$bundle"/tests/test_*; do
  [ -f "$e" ] || continue
  env -u LD_LIBRARY_PATH ldd "$e" > "$build/bundle-ldd.txt" 2>&1 || fail "ldd $e failed"
  ! grep -q 'not found' "$build/bundle-ldd.txt" || fail "$e: $(grep 'not found' "$build/bundle-ldd.txt")"
  awk '$2 == "=>" {print $1, $3}' "$build/bundle-ldd.txt" | while read -r name path; do
    system_lib "$name" && continue
    path=$(readlink -f "$path")
    case "$path" in "$abs"/lib/*) ;; *) fail "$e: $name resolves to $path, not the bundle's lib/" ;; esac
  done
done
out=$(cd / && env -u LD_LIBRARY_PATH "$abs/bin/rooftune" targets 2>&1) || fail "bin/rooftune targets failed: $out"
printf '%s\n' "$out" | grep -q host || fail "bin/rooftune targets: no host target: $out"
kout=$(cd / && env -u LD_LIBRARY_PATH "$abs/bin/rooftune" kernels 2>&1) || fail "bin/rooftune kernels failed: $kout"
! printf '%s\n' "$kout" | grep -q 'missing' || fail "bin/rooftune kernels from /: $kout"
# The GPU machine's glibc is 2.39: nothing may need a newer symbol version.
if command -v objdump > /dev/null; then
  for e in "$bundle/bin/rooftune" "$bundle"/lib/* "$bundle"/tests/test_*; do
    [ -f "$e" ] || continue
    v=$(objdump -T "$e" 2>/dev/null | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
    [ -z "$v" ] || [ "${v#GLIBC_2.}" -le 39 ] || fail "$e needs $v; the GPU machine has glibc 2.39"
  done
fi
kb=$(du -sk "$bundle" | cut -f1)
[ "$kb" -lt 30720 ] || fail "the bundle is $((kb / 1024)) MiB, over 30 MiB"
echo "device-bundle: $bundle ($((kb / 1024)).$((kb % 1024 * 10 / 1024)) MiB): bin/rooftune, $(ls "$bundle/tests" | grep -c '^test_') tests, lib/ $(ls "$bundle/lib" | tr '\n' ' ')"
