#!/usr/bin/env bash
# The "done when" of the installable package, on a FRESH Debian 12: builds the
# .deb from this tree, debootstraps a minimal bookworm into build/fresh-debian/
# and, chrooted there, does what a new user does (docs/install.md, "Checking
# the package on a fresh Debian 12"):
#   1. apt-get install --no-install-recommends ./layersec_*.deb (the CLI alone:
#      Depends from the Debian archive only), layersec selftest;
#   2. apt-get install the package's Recommends (what `apt install ./deb` adds
#      by default: compiler, cmake, pkg-config, the -dev packages) and nothing
#      else; build examples/embed with find_package(layersec) and with
#      pkg-config and run both programs (the SOME/IP server on loopback UDP);
#   3. layersec config import-arxml on the bundled ARXML, then layersec node
#      runs the result for 2 s on loopback (SecOC on, key group loaded);
#   4. layersec demo --quick writes report.html; chromium (installed in the
#      chroot from the Debian archive) renders it to a PNG; the rendered DOM
#      has the scenario, group-size and zonal tables and charts;
#   5. dpkg --purge layersec leaves none of its files.
# One PASS/FAIL line per step (with the command); exit status 1 when any step
# failed, 2 on a usage or environment error. Logs, report.html and the PNG in
# build/fresh-debian/out/.
#
# Run by hand as root, not in CI: it mounts proc/sys/dev into the chroot for
# the duration (unmounted by a trap) and downloads ~500 MB from
# deb.debian.org the first time (the minbase tree and the .debs are cached in
# build/fresh-debian/ and reused; every run starts from a fresh copy of the
# minbase tree).
#
# Usage: sudo scripts/fresh_debian_check.sh [--build-dir DIR] [--deb FILE]
#            [--mirror URL] [--no-chromium]
#   --build-dir DIR  the CMake build to package (default build/release, what
#                    `make package` uses; configured and built when missing);
#                    an existing build/test works as well (RelWithDebInfo:
#                    a larger package with debug information)
#   --deb FILE       check this package instead of building one
#   --no-chromium    skip installing chromium and rendering (reported as SKIP)
set -uo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
BUILD_DIR="$SRC/build/release"
DEB=""
MIRROR="http://deb.debian.org/debian"
CHROMIUM=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) BUILD_DIR="$(realpath -m "${2:?--build-dir needs a directory}")"; shift 2 ;;
    --deb) DEB="$(realpath -m "${2:?--deb needs a file}")"; shift 2 ;;
    --mirror) MIRROR="${2:?--mirror needs a URL}"; shift 2 ;;
    --no-chromium) CHROMIUM=0; shift ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "fresh_debian_check: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

[[ "$(id -u)" == 0 ]] || { echo "fresh_debian_check: run as root (debootstrap, chroot, mount)" >&2; exit 2; }
for tool in debootstrap chroot mount umount findmnt dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "fresh_debian_check: $tool is missing (apt-get install -y debootstrap)" >&2; exit 2; }
done

CACHE="$SRC/build/fresh-debian"
BASE="$CACHE/base"        # the pristine minbase tree (cached)
ROOT="$CACHE/root"        # this run's copy
ARCHIVES="$CACHE/apt-archives"
OUT="$CACHE/out"
mkdir -p "$CACHE" "$ARCHIVES/partial" "$OUT"
rm -f "$OUT"/*.log

FAILED=0
declare -a SUMMARY=()
say() { echo "$*"; SUMMARY+=("$*"); }
# step NAME COMMAND-TEXT: runs the function step_NAME (in a subshell with
# errexit, its output in $OUT/NAME.log); PASS or FAIL with the command; the
# status is the step's. Call it as a plain command (`step ...; ok=$?`): in an
# `if` or before `||` bash would ignore errexit inside the step.
step() {
  local name="$1" what="$2" rc
  (set -e; "step_$name") >"$OUT/$name.log" 2>&1
  rc=$?
  if [[ $rc == 0 ]]; then
    say "PASS: $name: $what"
    return 0
  fi
  say "FAIL: $name: $what (log: $OUT/$name.log)"
  tail -n 25 "$OUT/$name.log" | sed 's/^/    /'
  FAILED=$((FAILED + 1))
  return 1
}
skip() { say "SKIP: $1: $2"; }
blocked() { say "FAIL: $1: not run, $2 failed"; FAILED=$((FAILED + 1)); }

# --- mounts: only inside $ROOT, always undone ---------------------------------
mounts_under_root() { findmnt -rn -o TARGET | awk -v r="$ROOT" 'index($0, r "/") == 1 || $0 == r' | sort -r; }
unmount_root() {
  local m
  for m in $(mounts_under_root); do
    umount -R "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
}
cleanup() { unmount_root; }
trap cleanup EXIT
trap 'exit 130' INT TERM

in_root() {
  chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive /bin/bash -euo pipefail -c "$1"
}

# --- 0. the package and the fresh tree ----------------------------------------
step_package() {
  if [[ ! -f "$BUILD_DIR/build.ninja" && ! -f "$BUILD_DIR/Makefile" ]]; then
    if [[ "$BUILD_DIR" == "$SRC/build/release" ]]; then
      make -C "$SRC" build/release/build.ninja
    else
      echo "$BUILD_DIR is not a configured build directory"; return 1
    fi
  fi
  nice -n 10 cmake --build "$BUILD_DIR" -j "$(nproc)" --target layersec_install_set
  rm -f "$BUILD_DIR"/layersec_*.deb
  (cd "$BUILD_DIR" && cpack -G DEB)
  ls "$BUILD_DIR"/layersec_*.deb
}
step_debootstrap() {
  if [[ -f "$BASE/.layersec-debootstrap-ok" ]]; then
    echo "reusing $BASE"
    return 0
  fi
  rm -rf "$CACHE/base.tmp"
  debootstrap --variant=minbase bookworm "$CACHE/base.tmp" "$MIRROR"
  mv "$CACHE/base.tmp" "$BASE"
  touch "$BASE/.layersec-debootstrap-ok"
}
step_fresh_root() {
  unmount_root
  [[ -z "$(mounts_under_root)" ]] || { echo "still mounted under $ROOT:"; mounts_under_root; return 1; }
  rm -rf --one-file-system "$ROOT"  # never into a mount, even if one were missed
  cp -a "$BASE" "$ROOT"
  # What a Debian 12 installation has: main, updates and security.
  cat >"$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF
  cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"  # no services start in the chroot
  chmod 755 "$ROOT/usr/sbin/policy-rc.d"
  mount -t proc proc "$ROOT/proc"
  mount -t sysfs sysfs "$ROOT/sys"
  mount --rbind /dev "$ROOT/dev"
  mount --make-rslave "$ROOT/dev"
  mount --bind "$ARCHIVES" "$ROOT/var/cache/apt/archives"
  mkdir -p "$ROOT/root/work"
  cp "$DEB" "$ROOT/root/work/"
  cp -r "$SRC/examples" "$ROOT/root/work/examples"
  cp "$SRC/testdata/arxml/echo_server.arxml" "$ROOT/root/work/"
  # The tree is a fresh one: no layersec, no compiler, no -dev packages.
  in_root 'for t in layersec g++ cmake pkg-config; do
             if command -v $t; then echo "not fresh: $t is installed"; exit 1; fi
           done
           if test -e /usr/include/openssl; then echo "not fresh: OpenSSL headers"; exit 1; fi
           cat /etc/debian_version'
  in_root 'apt-get update -q'
}

# --- 1. the CLI alone ----------------------------------------------------------
step_install_cli() {
  in_root 'cd /root/work && apt-get install -y -q --no-install-recommends ./layersec_*.deb'
  in_root 'dpkg -s layersec | grep -E "^(Version|Depends|Recommends):"'
}
step_selftest() {
  in_root 'cd / && layersec selftest'
}

# --- 2. building against the package ----------------------------------------------
step_install_recommends() {
  # The Recommends field, versions and alternatives dropped: exactly what the
  # package declares for building against it, nothing added by this script.
  local rec
  rec="$(dpkg-deb -f "$DEB" Recommends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/ //g' | grep -v '^$' | tr '\n' ' ')"
  echo "Recommends: $rec"
  [[ -n "$rec" ]] || return 1
  in_root "apt-get install -y -q $rec"
}
step_examples_shipped() {
  in_root 'diff -r /root/work/examples /usr/share/doc/layersec/examples'
}
step_find_package() {
  in_root 'cd /root/work && rm -rf b-cmake
           cmake -S examples/embed -B b-cmake && cmake --build b-cmake
           b-cmake/secoc_udp 50 | tee secoc.out
           grep -q "secoc_udp: 50/50 PDUs verified; replay: replay; bit flip: mac-mismatch" secoc.out
           b-cmake/someip_echo | tee someip.out
           grep -q "someip_echo: PASS" someip.out'
}
step_pkg_config() {
  in_root 'cd /root/work && mkdir -p b-pc
           flags="$(pkg-config --cflags --libs layersec-secoc layersec-someip)"
           echo "$flags"
           case "$flags" in *pkgconfig/..*|*-I/usr/include\ *|*-L/usr/lib\ *)
             echo "pkg-config passes system directories (or a path through pkgconfig/..)"; exit 1 ;; esac
           g++ -std=c++20 -o b-pc/secoc_udp examples/embed/secoc_udp.cc $(pkg-config --cflags --libs layersec-secoc)
           g++ -std=c++20 -o b-pc/someip_echo examples/embed/someip_echo.cc $(pkg-config --cflags --libs layersec-someip)
           b-pc/secoc_udp 20 | tee pc-secoc.out
           grep -q "secoc_udp: PASS" pc-secoc.out
           b-pc/someip_echo | grep -q "someip_echo: PASS"
           b-pc/someip_echo --udp 127.0.0.1 0.3 | tee pc-udp.out
           grep -q "someip_echo: stopped, [1-9][0-9]* SD messages sent" pc-udp.out'
}

# --- 3. ARXML to a running node -------------------------------------------------------
step_import_arxml() {
  in_root 'cd /root/work && rm -rf ecu
           layersec config import-arxml echo_server.arxml --out ecu \
             --sync-tx-data-id 65001 --sync-rx-data-id 65002 --unicast 127.0.0.1
           test -s ecu/node.json && test -s ecu/secoc.json
           layersec secoc describe --config ecu/secoc.json | head -n 5'
}
step_node() {
  # SD moved off the default port: the chroot shares the host network.
  in_root 'cd /root/work
           if grep -q "\"service-discovery\"" ecu/node.json; then echo "node.json has its own service-discovery"; exit 1; fi
           sed -i "1s/^{\$/{\"service-discovery\": {\"port\": 31593},/" ecu/node.json
           grep -q "\"port\": 31593" ecu/node.json
           (umask 077 && mkdir -p ecu/keys && head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n" >ecu/keys/pair.key)
           layersec node --config ecu/node.json --duration 2 --json --first-start >node.out
           grep "\"type\":\"started\"" node.out | grep "\"secoc\":true" | grep -q "\"key_group\":\"pair\""
           tail -n 1 node.out | grep -q "\"stopped_by\":\"duration\""
           head -n 1 node.out'
}

# --- 4. the demo's report.html in a browser ---------------------------------------------
step_demo() {
  in_root 'cd /root/work && rm -rf demo
           layersec demo --quick --iterations 10 --seed 5 --out demo >demo.out
           grep "^report: " demo.out
           test -s demo/report.html'
  cp "$ROOT/root/work/demo/report.html" "$OUT/report.html"
}
step_install_chromium() {
  in_root 'apt-get install -y -q chromium && chromium --version'
}
step_render() {
  in_root 'cd /root/work && rm -rf profile
           timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
             --disable-background-networking --disable-component-update --disable-sync --user-data-dir=/root/work/profile \
             --host-resolver-rules="MAP * ~NOTFOUND" --hide-scrollbars --window-size=1400,6500 \
             --screenshot=/root/work/report.png --dump-dom file:///root/work/demo/report.html >dom.html
           head -c 8 report.png | od -An -tx1 | tr -d " \n" | grep -q "^89504e470d0a1a0a$"
           test "$(stat -c %s report.png)" -gt 100000
           for id in table-paper-scenarios-sim table-group-size table-zonal chart-cdf-paper-scenarios chart-group-size chart-zonal; do
             grep -q "id=\"$id\"" dom.html || { echo "rendered page lacks #$id"; exit 1; }
           done
           echo "report.png: $(stat -c %s report.png) bytes"'
  cp "$ROOT/root/work/report.png" "$OUT/report.png"
  echo "kept $OUT/report.png"
}

# --- 5. removal ----------------------------------------------------------------------------
step_purge() {
  in_root 'dpkg --purge layersec
           for p in /usr/bin/layersec /usr/bin/layersec-node /usr/include/layersec /usr/lib/cmake/layersec \
                    /usr/lib/pkgconfig/layersec-secoc.pc /usr/share/layersec /usr/share/doc/layersec; do
             test ! -e "$p" || { echo "left behind: $p"; exit 1; }
           done'
}

# --- run -------------------------------------------------------------------------------------
finish() {
  echo
  echo "fresh_debian_check summary ($(date -u +%FT%TZ), Debian $(cat "$ROOT/etc/debian_version" 2>/dev/null || echo '?')):"
  printf '  %s\n' "${SUMMARY[@]}"
  if [[ $FAILED -gt 0 ]]; then
    echo "fresh_debian_check: $FAILED step(s) failed"
    exit 1
  fi
  echo "fresh_debian_check: all steps passed"
  exit 0
}
if [[ -n "$DEB" ]]; then
  [[ -f "$DEB" ]] || { echo "fresh_debian_check: $DEB does not exist" >&2; exit 2; }
  say "PASS: package: given $DEB"
else
  step package "cmake --build $BUILD_DIR --target layersec_install_set && (cd $BUILD_DIR && cpack -G DEB)"
  [[ $? == 0 ]] || { blocked everything package; finish; }
  DEB="$(ls "$BUILD_DIR"/layersec_*.deb | head -n 1)"
  say "      package: $DEB ($(du -h "$DEB" | cut -f1))"
fi
step debootstrap "debootstrap --variant=minbase bookworm $BASE $MIRROR"
[[ $? == 0 ]] || finish
step fresh_root "cp -a base root; mount proc, sys, dev; apt-get update (main, updates, security)"
[[ $? == 0 ]] || finish
step install_cli "apt-get install --no-install-recommends ./$(basename "$DEB")"
[[ $? == 0 ]] || { blocked "selftest, examples, arxml, demo" install_cli; finish; }
step selftest "layersec selftest"
step install_recommends "apt-get install <the package's Recommends>"
if [[ $? == 0 ]]; then
  step examples_shipped "diff -r examples/ /usr/share/doc/layersec/examples"
  step find_package "cmake -S examples/embed (find_package(layersec)) && secoc_udp 50 && someip_echo"
  step pkg_config "g++ -std=c++20 ... \$(pkg-config --cflags --libs layersec-secoc|layersec-someip); someip_echo --udp 127.0.0.1 0.3"
else
  blocked find_package install_recommends
  blocked pkg_config install_recommends
fi
step import_arxml "layersec config import-arxml echo_server.arxml --out ecu --sync-tx-data-id 65001 --sync-rx-data-id 65002"
if [[ $? == 0 ]]; then
  step node "layersec node --config ecu/node.json --duration 2 --first-start"
else
  blocked node import_arxml
fi
step demo "layersec demo --quick --iterations 10 --out demo"
if [[ $? != 0 ]]; then
  blocked render demo
elif [[ $CHROMIUM == 0 ]]; then
  skip render "--no-chromium"
else
  step install_chromium "apt-get install chromium"
  if [[ $? == 0 ]]; then
    step render "chromium --headless --screenshot --dump-dom demo/report.html"
  else
    blocked render install_chromium
  fi
fi
step purge "dpkg --purge layersec"
finish
