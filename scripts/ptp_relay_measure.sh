#!/usr/bin/env bash
# Measurement (not in the suite; docs/ptp.md "A relay between real
# processes"): a slave's offset to the GM through a layersec relay against a
# slave on a direct link, for layersec and ptp4l slaves, in one run.
#
#   ptp4l GM (-S, gPTP.cfg, 3 ports) --g1-- layersec relay (3 ports) --r1-- layersec slave L1
#                                                                    --r2-- ptp4l slave P1
#                                    --g2-- layersec slave L0 (direct)
#                                    --g3-- ptp4l slave P0 (direct)
#
# gptp profile, software timestamps, neighborPropDelayThresh 100000, the
# ptp4l slaves free_running 1 (their master_offset read with pmc). Prints,
# over the second half of MEASURE_SECONDS (60): each slave's offset rms
# (layersec: the servo's offset_rms_ns; ptp4l: master_offset) and the
# layersec slaves' true error (their clock minus CLOCK_REALTIME, which ptp4l
# -S serves), and the relay's residence time (median of the per-second p50,
# largest max). Root only. Usage: scripts/ptp_relay_measure.sh /path/to/layersec
set -euo pipefail
layersec="${1:?usage: $0 /path/to/layersec}"
seconds="${MEASURE_SECONDS:-60}"
py=/usr/bin/python3
cfgdir=/usr/share/doc/linuxptp/configs
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/cli/lib" && pwd)/netns.sh"
id=$$
ng="relay-mg$id"; nr="relay-mr$id"; nl1="relay-ml1$id"; np1="relay-mp1$id"; nl0="relay-ml0$id"; np0="relay-mp0$id"
netns_init ptp_relay_measure
netns_add "$ng" "$nr" "$nl1" "$np1" "$nl0" "$np0"
netns_veth "$ng" "mg1$id" 02:00:00:5f:00:01 "$nr" "mr0$id" 02:00:00:5f:00:10
netns_veth "$ng" "mg2$id" 02:00:00:5f:00:02 "$nl0" "ml0$id" 02:00:00:5f:00:30
netns_veth "$ng" "mg3$id" 02:00:00:5f:00:03 "$np0" "mp0$id" 02:00:00:5f:00:40
netns_veth "$nr" "mr1$id" 02:00:00:5f:00:11 "$nl1" "ml1$id" 02:00:00:5f:00:31
netns_veth "$nr" "mr2$id" 02:00:00:5f:00:12 "$np1" "mp1$id" 02:00:00:5f:00:41

cfg() {  # OUT UDS EXTRA...
  local out="$1" uds="$2"
  shift 2
  grep -v -E '^(neighborPropDelayThresh|priority1|free_running|uds_address)' "$cfgdir/gPTP.cfg" > "$out"
  { echo "neighborPropDelayThresh 100000"; echo "uds_address $uds"; printf '%s\n' "$@"; } >> "$out"
}
pmc_poll() {  # NS UDS OUT
  while :; do
    ip netns exec "$1" pmc -u -b 0 -t 1 -s "$2" 'GET TIME_STATUS_NP' 2>/dev/null |
      awk '$1 == "master_offset" {print $2}' >> "$3" || true
    sleep 0.25
  done
}
cfg "$work/gm.cfg" "$work/gm.uds" "priority1 246"
cfg "$work/p0.cfg" "$work/p0.uds" "priority1 248" "free_running 1" "slaveOnly 1"
cfg "$work/p1.cfg" "$work/p1.uds" "priority1 248" "free_running 1" "slaveOnly 1"
ip netns exec "$ng" ptp4l -S -m -f "$work/gm.cfg" -i "mg1$id" -i "mg2$id" -i "mg3$id" > "$work/gm.out" 2>&1 &
pids+=($!)
common=(--json --neighbor-prop-delay-thresh 100000 --minor-version 0 --profile gptp)
ip netns exec "$nr" "$layersec" ptp --iface "mr0$id" --iface "mr1$id" --iface "mr2$id" "${common[@]}" \
  --duration $((seconds + 1)) > "$work/relay.out" 2> "$work/relay.err" &
pids+=($!)
for s in 0 1; do
  ns=np$s
  ip netns exec "${!ns}" ptp4l -S -m -f "$work/p$s.cfg" -i "mp$s$id" > "$work/p$s.out" 2>&1 &
  pids+=($!)
  : > "$work/p$s.txt"
  pmc_poll "${!ns}" "$work/p$s.uds" "$work/p$s.txt" &
  pids+=($!)
done
ip netns exec "$nl0" "$layersec" ptp --iface "ml0$id" --role slave "${common[@]}" --duration "$seconds" \
  > "$work/l0.out" 2> "$work/l0.err" &
pids+=($!)
ip netns exec "$nl1" "$layersec" ptp --iface "ml1$id" --role slave "${common[@]}" --duration "$seconds" \
  > "$work/l1.out" 2> "$work/l1.err"
sleep 1
"$py" - "$work" <<'EOF'
import json, math, sys
w = sys.argv[1]
rms = lambda v: f"{math.sqrt(sum(x * x for x in v) / len(v)):.0f}" if v else "none"
def rows(p):
    return [json.loads(l) for l in open(p) if l.startswith("{")]
def half(v):
    return v[len(v) // 2:]
for name, label in (("l0", "layersec slave, direct"), ("l1", "layersec slave, through the relay")):
    r = half(rows(f"{w}/{name}.out"))
    off = [x["offset_rms_ns"] for x in r if x.get("offset_rms_ns") is not None]
    true = [x["offset_to_realtime_ns"] for x in r if x.get("state") == "slave"]
    print(f"{label}: offset rms {rms(off)} ns, true error rms {rms(true)} ns, {sum(1 for x in r if x.get('state') == 'slave')} slave s of {len(r)}, gm {r[-1]['grandmaster'] if r else None}")
for name, label in (("p0", "ptp4l slave, direct"), ("p1", "ptp4l slave, through the relay")):
    v = half([float(l) for l in open(f"{w}/{name}.txt") if l.strip()])
    print(f"{label}: master_offset rms {rms(v)} ns over {len(v)} samples")
r = half(rows(f"{w}/relay.out"))
res = [x["residence_ns"] for x in r if x["residence_ns"]["p50"] is not None]
p50 = sorted(x["p50"] for x in res)
print(f"relay: state {r[-1]['state']}, residence p50 (median of per-second p50) {p50[len(p50) // 2]:.0f} ns, "
      f"max {max(x['max'] for x in res):.0f} ns; after the upstream Follow_Up p50 "
      f"{sorted(x['after_follow_up_p50'] for x in res)[len(res) // 2]:.0f} ns, max {max(x['after_follow_up_max'] for x in res):.0f} ns, forwarded per port {[p['syncs_forwarded'] for p in r[-1]['ports']]}, "
      f"roles {[p['role'] for p in r[-1]['ports']]}, drops {[p['drops'] for p in r[-1]['ports']]}")
EOF
