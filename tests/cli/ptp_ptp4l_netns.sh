#!/usr/bin/env bash
# Interop of `layersec ptp` with linuxptp's ptp4l over veth pairs between
# network namespaces, software timestamps on both sides (ptp4l -S).
#   1. gptp profile (BMCA): ptp4l as GM with two ports; on one a layersec
#      slave, on the other a ptp4l slave (free_running 1: it measures but
#      adjusts no clock; its offsets are read with pmc), for PTP_SECONDS (20) s. Asserts that layersec
#      reaches the slave state with ptp4l's clock as GM and that its offset
#      rms over the second half stays below PTP_MAX_RMS_NS (20000); prints
#      layersec's rms beside the ptp4l slave's, both from the same GM in the
#      same run, and layersec's true error (its clock minus CLOCK_REALTIME,
#      which ptp4l -S serves).
#   2. automotive profile: layersec as GM, ptp4l with automotive-slave.cfg
#      (free_running 1) for PTP_SECONDS s. Asserts the ptp4l slave's rms over
#      the second half stays below PTP_MAX_RMS_NS.
#   3. automotive profile: ptp4l with automotive-master.cfg as GM, layersec
#      slave with --interval-request (threshold 5 µs); asserts as in 1, and
#      that the ptp4l GM obeyed the Signaling (about 1 Sync/s at the end).
# No host clock is adjusted: ptp4l runs with free_running 1 where it is a
# slave, and layersec disciplines only its own clock. Every ptp4l has its
# own uds_address; neighborPropDelayThresh is raised (a veth measures
# 0.4-1.5 µs with software timestamps, above the stock 800 ns).
# Root only; exits 77 with the reason when ptp4l, python3 or root is missing.
# Usage: bash tests/cli/ptp_ptp4l_netns.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
seconds="${PTP_SECONDS:-20}"
max_rms="${PTP_MAX_RMS_NS:-20000}"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: ptp_ptp4l_netns needs root (network namespaces, AF_PACKET)"; exit 77; fi
for tool in ptp4l pmc ip python3; do
  if ! command -v "$tool" >/dev/null 2>&1; then echo "SKIP: $tool is not installed (Debian: linuxptp, iproute2, python3)"; exit 77; fi
done
cfgdir=/usr/share/doc/linuxptp/configs
[[ -f $cfgdir/gPTP.cfg && -f $cfgdir/automotive-slave.cfg ]] || { echo "SKIP: linuxptp's example configs are missing in $cfgdir"; exit 77; }
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"

id=$$
nsg="lptG$id"; nsl="lptL$id"; nsp="lptP$id"
netns_init ptp_ptp4l_netns
netns_add "$nsg" "$nsl" "$nsp"
netns_veth "$nsg" "pg1$id" 02:00:00:50:00:01 "$nsl" "pl$id" 02:00:00:50:00:02
netns_veth "$nsg" "pg2$id" 02:00:00:50:00:03 "$nsp" "pp$id" 02:00:00:50:00:04

# ptp4l configuration: a stock file, some keys replaced, others appended.
ptp4l_cfg() {  # SRC OUT UDS EXTRA...
  local src="$1" out="$2" uds="$3"
  shift 3
  grep -v -E '^(neighborPropDelayThresh|priority1|free_running|uds_address)' "$src" > "$out"
  { echo "neighborPropDelayThresh 100000"; echo "uds_address $uds"; printf '%s\n' "$@"; } >> "$out"
}

# A ptp4l with free_running 1 logs no offsets; its master_offset (the last
# Sync's measurement) is read over its UDS with pmc, 4 times a second.
pmc_poll() {  # NS UDS OUT
  while :; do
    ip netns exec "$1" pmc -u -b 0 -t 1 -s "$2" 'GET TIME_STATUS_NP' 2>/dev/null |
      awk '$1 == "master_offset" {print $2}' >> "$3" || true
    sleep 0.25
  done
}

# rms over the second half of the polled master_offset values (ns).
ptp4l_rms() {
  python3 - "$1" <<'EOF'
import math, sys
v = [float(l) for l in open(sys.argv[1]) if l.strip()]
v = v[len(v) // 2:]
print(f"{math.sqrt(sum(x * x for x in v) / len(v)):.0f}" if v else "none")
EOF
}

# layersec's JSON lines: rms of offset_rms_ns and of offset_to_realtime_ns
# over the second half, the last state, and the number of slave seconds.
layersec_stats() {
  python3 - "$1" <<'EOF'
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
half = rows[len(rows) // 2:]
off = [r["offset_rms_ns"] for r in half if r.get("offset_rms_ns") is not None]
true = [r["offset_to_realtime_ns"] for r in half if r.get("state") == "slave"]
rms = lambda v: f"{math.sqrt(sum(x * x for x in v) / len(v)):.0f}" if v else "none"
print(rms(off), rms(true), rows[-1]["state"] if rows else "none", sum(1 for r in half if r.get("state") == "slave"),
      json.dumps(rows[-1].get("drops", {})) if rows else "{}", rows[-1].get("path_delay_ns") if rows else None)
EOF
}

# --- 1. ptp4l GM (two ports) -> layersec slave and ptp4l slave, gptp profile
ptp4l_cfg "$cfgdir/gPTP.cfg" "$work/gm.cfg" "$work/gm.uds" "priority1 246"
ptp4l_cfg "$cfgdir/gPTP.cfg" "$work/slave.cfg" "$work/slave.uds" "priority1 248" "free_running 1" "slaveOnly 1"
ip netns exec "$nsg" ptp4l -S -m -f "$work/gm.cfg" -i "pg1$id" -i "pg2$id" > "$work/gm1.out" 2>&1 &
pids+=($!)
ip netns exec "$nsp" ptp4l -S -m -f "$work/slave.cfg" -i "pp$id" > "$work/ptp4l_slave1.out" 2>&1 &
pids+=($!)
: > "$work/ptp4l_offsets1.txt"
pmc_poll "$nsp" "$work/slave.uds" "$work/ptp4l_offsets1.txt" &
pids+=($!)
ip netns exec "$nsl" "$layersec" ptp --iface "pl$id" --profile gptp --role slave --json --duration "$seconds" \
  --minor-version 0 --neighbor-prop-delay-thresh 100000 > "$work/layersec_slave.out" 2> "$work/layersec_slave.err" ||
  fail "layersec ptp (slave) exited with $?"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
read -r l_rms l_true l_state l_slave_s l_drops l_delay < <(layersec_stats "$work/layersec_slave.out")
p_rms="$(ptp4l_rms "$work/ptp4l_offsets1.txt")"
echo "ptp4l GM -> slaves, gptp, ${seconds} s, second half: layersec offset rms ${l_rms} ns (true error vs CLOCK_REALTIME rms ${l_true} ns, path delay ${l_delay} ns), ptp4l slave offset rms ${p_rms} ns"
echo "  layersec: $(tail -n 1 "$work/layersec_slave.err")"
echo "  layersec drops: ${l_drops}"
[[ "$l_state" == slave ]] || fail "layersec did not end in the slave state (last state: $l_state)"
[[ "$l_slave_s" -ge $((seconds / 2 - 2)) ]] || fail "layersec was a synchronised slave for only $l_slave_s of the last $((seconds / 2)) s"
[[ "$l_rms" != none ]] && python3 -c "import sys; sys.exit(0 if float('$l_rms') < $max_rms else 1)" ||
  fail "layersec offset rms ${l_rms} ns is not below ${max_rms} ns"
[[ "$p_rms" != none ]] || fail "the ptp4l slave reported no offsets (see ptp4l_slave1.out)"
if python3 -c "import sys; sys.exit(0 if float('$l_rms') <= float('$p_rms') else 1)"; then
  echo "  goal (layersec rms <= ptp4l slave rms, same GM, same run): met"
else
  echo "  goal (layersec rms <= ptp4l slave rms, same GM, same run): NOT met"
fi

# --- 2. layersec GM -> ptp4l slave, automotive profile
ptp4l_cfg "$cfgdir/automotive-slave.cfg" "$work/aslave.cfg" "$work/aslave.uds" "free_running 1"
ip netns exec "$nsp" ptp4l -S -m -f "$work/aslave.cfg" -i "pp$id" > "$work/ptp4l_slave2.out" 2>&1 &
pids+=($!)
: > "$work/ptp4l_offsets2.txt"
pmc_poll "$nsp" "$work/aslave.uds" "$work/ptp4l_offsets2.txt" &
pids+=($!)
ip netns exec "$nsg" "$layersec" ptp --iface "pg2$id" --profile automotive --role gm --json --duration "$seconds" \
  --minor-version 0 > "$work/layersec_gm.out" 2> "$work/layersec_gm.err" || fail "layersec ptp (gm) exited with $?"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
p2_rms="$(ptp4l_rms "$work/ptp4l_offsets2.txt")"
echo "layersec GM -> ptp4l slave, automotive, ${seconds} s, second half: ptp4l slave offset rms ${p2_rms} ns (to a ptp4l GM above: ${p_rms} ns)"
echo "  layersec: $(tail -n 1 "$work/layersec_gm.err")"
[[ "$p2_rms" != none ]] || fail "the ptp4l slave reported no offsets from the layersec GM (see ptp4l_slave2.out)"
python3 -c "import sys; sys.exit(0 if float('$p2_rms') < $max_rms else 1)" ||
  fail "the ptp4l slave's offset rms ${p2_rms} ns to the layersec GM is not below ${max_rms} ns"
# --- 3. ptp4l GM (automotive-master.cfg) -> layersec slave, automotive profile
ptp4l_cfg "$cfgdir/automotive-master.cfg" "$work/amaster.cfg" "$work/amaster.uds"
ip netns exec "$nsg" ptp4l -S -m -f "$work/amaster.cfg" -i "pg1$id" > "$work/gm3.out" 2>&1 &
pids+=($!)
ip netns exec "$nsl" "$layersec" ptp --iface "pl$id" --profile automotive --role slave --json --duration "$seconds" \
  --minor-version 0 --interval-request --offset-threshold 5000 > "$work/layersec_aslave.out" 2> "$work/layersec_aslave.err" ||
  fail "layersec ptp (automotive slave) exited with $?"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
read -r a_rms a_true a_state a_slave_s a_drops a_delay < <(layersec_stats "$work/layersec_aslave.out")
echo "ptp4l GM (automotive-master.cfg) -> layersec slave, ${seconds} s, second half: layersec offset rms ${a_rms} ns (true error rms ${a_true} ns, path delay ${a_delay} ns), drops ${a_drops}"
[[ "$a_state" == slave ]] || fail "the automotive layersec slave did not end in the slave state (last state: $a_state)"
# --interval-request: once 10 offsets were within 5 µs the slave asked the
# ptp4l GM by Signaling for 1 s Sync; the GM must have obeyed.
read -r switched rate < <(python3 - "$work/layersec_aslave.out" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(int(bool(rows) and rows[-1].get("operational_intervals", False)),
      (rows[-1]["syncs"] - rows[-5]["syncs"]) / 4 if len(rows) >= 5 else -1)
EOF
)
echo "  interval request: switched ${switched}, Syncs/s over the last 4 s ${rate}"
[[ "$switched" == 1 ]] || fail "the automotive layersec slave never switched to its operational intervals"
python3 -c "import sys; sys.exit(0 if 0 < float('$rate') <= 2 else 1)" ||
  fail "the ptp4l GM still sends ${rate} Syncs/s after the Signaling asked for 1/s"
[[ "$a_rms" != none ]] && python3 -c "import sys; sys.exit(0 if float('$a_rms') < $max_rms else 1)" ||
  fail "automotive layersec slave offset rms ${a_rms} ns is not below ${max_rms} ns"
echo "PASS ptp_ptp4l_netns"
