#!/usr/bin/env bash
# `make package` produces a Debian package with the CLI, the libraries, the
# headers and the docs, and declares its dependencies: run CPack on an
# existing build (no rebuild) into a scratch folder and read the package back
# with dpkg-deb -c / -I. Installing it changes the machine, so that is done by
# hand (docs/install.md).
# Usage: bash tests/install/package.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
command -v dpkg-deb >/dev/null || { echo "SKIP: dpkg-deb is not installed"; exit 77; }
command -v dpkg-shlibdeps >/dev/null || { echo "SKIP: dpkg-shlibdeps (dpkg-dev) is not installed"; exit 77; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cpack --config "$BUILD/CPackConfig.cmake" -B "$WORK" -G DEB >"$WORK/cpack.log" 2>&1 \
  || { tail -n 30 "$WORK/cpack.log"; fail "cpack"; }
DEB="$(ls "$WORK"/layersec_*.deb 2>/dev/null | head -n 1)"
[[ -n "$DEB" ]] || fail "no layersec_*.deb in $WORK"
echo "ok: $(basename "$DEB"), $(du -h "$DEB" | cut -f1)"

dpkg-deb -c "$DEB" | awk '{print $6}' >"$WORK/files"
for f in ./usr/bin/layersec ./usr/include/layersec/secoc/engine.h ./usr/include/layersec/someip/runtime.h \
         ./usr/lib/liblayersec_secoc_core.a ./usr/lib/liblayersec_someip_io.a \
         ./usr/lib/cmake/layersec/layersecConfig.cmake ./usr/lib/cmake/layersec/layersecTargets.cmake \
         ./usr/lib/pkgconfig/layersec-secoc.pc ./usr/lib/pkgconfig/layersec-someip.pc \
         ./usr/share/layersec/testdata/crypto/gcm_vectors.json ./usr/share/doc/layersec/README.md \
         ./usr/share/doc/layersec/docs/api.md ./usr/share/doc/layersec/examples/embed/secoc_udp.cc; do
  grep -qx "$f" "$WORK/files" || fail "$f is not in the package"
done
if grep -q '^./usr/include/layersec/harness/' "$WORK/files"; then fail "internal harness headers packaged"; fi
echo "ok: dpkg-deb -c: CLI, headers, libraries, CMake and pkg-config files, data and docs ($(wc -l <"$WORK/files") entries)"
# Under /usr the .pc files spell the prefix /usr (pkg-config then leaves the
# system directories out of --cflags/--libs), not ${pcfiledir}/../..
pc_prefix="$(dpkg-deb --fsys-tarfile "$DEB" | tar -xO ./usr/lib/pkgconfig/layersec-secoc.pc | sed -n 's/^prefix=//p')"
[[ "$pc_prefix" == "/usr" ]] || fail "layersec-secoc.pc in the package: prefix=$pc_prefix, want /usr"
echo "ok: the packaged .pc files say prefix=/usr"

dpkg-deb -I "$DEB" >"$WORK/info"
depends="$(sed -n 's/^ Depends: //p' "$WORK/info")"
recommends="$(sed -n 's/^ Recommends: //p' "$WORK/info")"
echo "Depends: $depends"
for d in libc6 libstdc++6 libssl3 libpcap0.8 libnl-3-200 libnl-genl-3-200 libnl-route-3-200 libntru; do
  [[ "$depends" == *"$d"* ]] || fail "Depends lacks $d"
done
for r in libssl-dev nlohmann-json3-dev libpcap-dev libnl-3-dev libntru-0.5-dev cmake pkg-config; do
  [[ "$recommends" == *"$r"* ]] || fail "Recommends lacks $r"
done
grep -q '^ Package: layersec$' "$WORK/info" || fail "package name"
grep -q '^ Architecture: amd64$\|^ Architecture: ' "$WORK/info" || fail "architecture"
echo "ok: dpkg-deb -I: Depends from dpkg-shlibdeps, Recommends the -dev packages"
echo "PASS"
