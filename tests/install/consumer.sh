#!/usr/bin/env bash
# The installed library cannot silently break: stage-install the dev component
# of an existing build (DESTDIR, no rebuild), check the installed headers and
# package files, then build examples/embed against the staged tree with
# find_package(layersec) and with pkg-config, and run both programs.
# Usage: bash tests/install/consumer.sh BUILD_DIR SOURCE_DIR CXX
set -euo pipefail
BUILD="$(cd "${1:?usage: $0 BUILD_DIR SOURCE_DIR CXX}" && pwd)"
SRC="$(cd "${2:?}" && pwd)"
CXX="${3:?}"
# A fixed folder in the build tree (not mktemp): stable paths let ccache reuse
# the examples' objects between runs.
WORK="$BUILD/install-test"
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(ccache); fi
fail() { echo "FAIL: $*"; exit 1; }
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config is not installed"; exit 77; }

STAGE="$WORK/stage"
PREFIX=/opt/layersec
DESTDIR="$STAGE" cmake --install "$BUILD" --prefix "$PREFIX" --component dev >"$WORK/install.log"
ROOT="$STAGE$PREFIX"
LIBDIR="$(cd "$ROOT" && ls -d lib*/cmake/layersec | head -n 1 | xargs dirname | xargs dirname)"
[[ -f "$ROOT/$LIBDIR/cmake/layersec/layersecConfig.cmake" ]] || fail "no layersecConfig.cmake"
[[ -f "$ROOT/$LIBDIR/pkgconfig/layersec-secoc.pc" ]] || fail "no layersec-secoc.pc"
[[ -f "$ROOT/include/layersec/secoc/engine.h" ]] || fail "no include/layersec/secoc/engine.h"
echo "ok: staged install: $(find "$ROOT/include" -name '*.h' | wc -l) headers, $(ls "$ROOT/$LIBDIR"/*.a | wc -l) libraries, $(ls "$ROOT/$LIBDIR/pkgconfig" | wc -l) .pc files"

# Only the public set is installed: internal headers stay out.
for internal in someip/sd_driver.h secoc/simulation.h harness/demo.h node/runner.h kex/kem_internal.h; do
  if [[ -f "$ROOT/include/layersec/$internal" ]]; then
    # Allowed only when a public header includes it (the closure).
    grep -qx "layersec/$internal" "$BUILD/install/public_headers.txt" || fail "internal header $internal installed"
  fi
done
[[ ! -e "$ROOT/include/layersec/harness" ]] || fail "harness headers installed"
# Every installed header includes only installed layersec headers.
while read -r h; do
  while read -r inc; do
    [[ -f "$ROOT/include/$inc" ]] || fail "$h includes $inc, which is not installed"
  done < <(sed -n 's/^#include "\(layersec\/[^"]*\)".*/\1/p' "$ROOT/include/$h")
done < "$BUILD/install/public_headers.txt"
echo "ok: $(wc -l < "$BUILD/install/public_headers.txt") installed headers include only installed headers"

# 1. find_package(layersec)
cmake -S "$SRC/examples/embed" -B "$WORK/cmake-build" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_PREFIX_PATH="$ROOT" ${LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=ccache} >"$WORK/cmake.log" 2>&1 \
  || { cat "$WORK/cmake.log"; fail "configure with find_package(layersec)"; }
cmake --build "$WORK/cmake-build" >"$WORK/build.log" 2>&1 || { tail -n 40 "$WORK/build.log"; fail "build with find_package"; }
"$WORK/cmake-build/secoc_udp" 50 | tee "$WORK/secoc.out"
grep -q 'secoc_udp: 50/50 PDUs verified; replay: replay; bit flip: mac-mismatch' "$WORK/secoc.out" \
  || fail "secoc_udp (cmake) did not verify and reject as expected"
"$WORK/cmake-build/someip_echo" | tee "$WORK/someip.out"
grep -q 'someip_echo: PASS' "$WORK/someip.out" || fail "someip_echo (cmake)"
echo "ok: find_package(layersec): secoc_udp and someip_echo build and pass"

# 2. pkg-config (the .pc files find their prefix from their own location)
export PKG_CONFIG_PATH="$ROOT/$LIBDIR/pkgconfig"
flags_secoc="$(pkg-config --cflags --libs layersec-secoc)" || fail "pkg-config layersec-secoc"
flags_someip="$(pkg-config --cflags --libs layersec-someip)" || fail "pkg-config layersec-someip"
# shellcheck disable=SC2086
"${LAUNCHER[@]}" "$CXX" -std=c++20 -o "$WORK/secoc_udp" "$SRC/examples/embed/secoc_udp.cc" $flags_secoc \
  || fail "build secoc_udp with pkg-config"
# shellcheck disable=SC2086
"${LAUNCHER[@]}" "$CXX" -std=c++20 -o "$WORK/someip_echo" "$SRC/examples/embed/someip_echo.cc" $flags_someip \
  || fail "build someip_echo with pkg-config"
"$WORK/secoc_udp" 20 | grep -q 'secoc_udp: PASS' || fail "secoc_udp (pkg-config)"
"$WORK/someip_echo" | grep -q 'someip_echo: PASS' || fail "someip_echo (pkg-config)"
# The real-socket path: the server on loopback for a moment, clean stop.
"$WORK/someip_echo" --udp 127.0.0.1 0.3 | tee "$WORK/udp.out"
grep -q 'someip_echo: stopped, [1-9][0-9]* SD messages sent' "$WORK/udp.out" \
  || fail "someip_echo --udp did not offer over UDP and stop"
echo "ok: pkg-config: secoc_udp and someip_echo build and pass; the server runs on real UDP"
echo "PASS"
