#!/bin/sh
# Instructions per SecOC protect+verify of a 64-byte PDU, ours and the bare
# OpenSSL baseline (two context-reusing MAC computations), per profile, from
# callgrind: (Ir(N2) - Ir(N1)) / (N2 - N1), so set-up is excluded and the
# figure does not depend on the load of the machine.
# Usage: scripts/secoc_callgrind.sh [BUILD_DIR] (default build/test; needs
# the target secoc_icount and valgrind).
set -eu
build=${1:-build/test}
bin="$build/bench/secoc_icount"
[ -x "$bin" ] || { echo "build $bin first: cmake --build $build --target secoc_icount" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
n1=2000
n2=12000
ir() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" "$3" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
# own_ir: two bare computations of the engine's own MAC (crypto::make_mac,
# CbcCmac for CMAC); framing = ours / own, what the engine adds around it.
printf '%-12s %12s %14s %8s %12s %8s\n' profile ours_ir baseline_ir ratio own_ir framing
for p in profile1 profile2 profile3 vendor hmac-sha256; do
  o1=$(ir "$p" ours $n1); o2=$(ir "$p" ours $n2)
  b1=$(ir "$p" baseline $n1); b2=$(ir "$p" baseline $n2)
  w1=$(ir "$p" own $n1); w2=$(ir "$p" own $n2)
  awk -v p="$p" -v o1="$o1" -v o2="$o2" -v b1="$b1" -v b2="$b2" -v w1="$w1" -v w2="$w2" -v n="$((n2 - n1))" 'BEGIN {
    o = (o2 - o1) / n; b = (b2 - b1) / n; w = (w2 - w1) / n;
    printf "%-12s %12.1f %14.1f %8.3f %12.1f %8.3f\n", p, o, b, o / b, w, o / w }'
done
# The MAC path alone: a hand-written vendor protect+verify with the same two
# crypto::Mac computations (secoc_icount_main.cc, run_floor).
f1=$(ir vendor floor $n1); f2=$(ir vendor floor $n2)
b1=$(ir vendor baseline $n1); b2=$(ir vendor baseline $n2)
awk -v f1="$f1" -v f2="$f2" -v b1="$b1" -v b2="$b2" -v n="$((n2 - n1))" 'BEGIN {
  f = (f2 - f1) / n; b = (b2 - b1) / n;
  printf "%-12s %12.1f %14.1f %8.3f  (hand-written floor)\n", "vendor-floor", f, b, f / b }'
