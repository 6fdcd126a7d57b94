#!/usr/bin/env bash
# A gPTP time-aware relay between real processes: `layersec ptp --iface A
# --iface B` in a namespace chain GM —veth— RELAY —veth— SLAVE, software
# timestamps on every side.
#   a. layersec GM -> layersec relay -> layersec slave, automotive and gptp,
#      RELAY_SECONDS (20) s each: the slave ends `slave`, follows the GM
#      (gptp: its grandmaster is the GM's clock; automotive, which has no
#      Announce: the relay follows the GM and the slave the relay's port),
#      its true error (its clock minus CLOCK_REALTIME, which the layersec GM
#      serves) has an rms over the second half below RELAY_MAX_ERR_NS
#      (50000: a correctness bound; measured runs are in docs/ptp.md), and
#      the relay's per-port counters show the Syncs it forwarded.
#   b. interop (skipped with the reason when ptp4l or pmc is missing): ptp4l
#      GM (-S, gPTP.cfg) -> layersec relay -> ptp4l slave (free_running 1,
#      slaveOnly): the ptp4l slave takes the ptp4l GM as its grandmaster
#      through our relay and measures against it (it accepts our forwarded
#      Sync and Follow_Up and their correction): its master_offset (read
#      with pmc) has an rms over the second half below RELAY_MAX_ERR_NS.
#      With free_running 1 ptp4l's port stays UNCALIBRATED under gptp (no
#      servo runs; the host clock is not ours to adjust), so "s2" is not
#      asserted there. Then layersec GM -> layersec relay -> ptp4l slave
#      (automotive-slave.cfg, port SLAVE from configuration) the same way.
#   c. bad input on the relay (automotive): a Sync + Follow_Up stream into
#      the relay's master port (from the slave's side) and a second GM's
#      Announce + Sync + Follow_Up (1 s ahead) on the port facing the GM
#      (tests/cli/lib/ptp_attack.py): dropped and counted (wrong_role,
#      announce_disabled, second_gm), never forwarded (the relay forwarded no
#      more Syncs than it accepted from the GM, and the slave's true error
#      stays within the bound).
#   Also: the relay's option refusals (exit 2, naming the option).
# No host clock is adjusted. Root only; exits 77 with the reason when root,
# ip or /usr/bin/python3 is missing.
# Usage: bash tests/cli/ptp_relay_netns.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
seconds="${RELAY_SECONDS:-20}"
max_err="${RELAY_MAX_ERR_NS:-50000}"
py=/usr/bin/python3
lib="$(cd "$(dirname "${BASH_SOURCE[0]}")/lib" && pwd)"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: ptp_relay_netns needs root (network namespaces, AF_PACKET)"; exit 77; fi
for tool in ip "$py"; do
  if ! command -v "$tool" >/dev/null 2>&1; then echo "SKIP: $tool is not installed (Debian: iproute2, python3)"; exit 77; fi
done
source "$lib/netns.sh"

id=$$
nsg="relay-g$id"; nsr="relay-r$id"; nss="relay-s$id"
ifg="rg$id"; ifr0="rr0$id"; ifr1="rr1$id"; ifs="rs$id"
gm_mac=02:00:00:5e:00:01; slave_mac=02:00:00:5e:00:20
netns_init ptp_relay_netns
netns_add "$nsg" "$nsr" "$nss"
netns_veth "$nsg" "$ifg" "$gm_mac" "$nsr" "$ifr0" 02:00:00:5e:00:10
netns_veth "$nsr" "$ifr1" 02:00:00:5e:00:11 "$nss" "$ifs" "$slave_mac"
# EUI-64 clock identities of the MACs (as layersec derives them).
gm_id=020000fffe5e0001; relay_id=020000fffe5e0010
common=(--json --neighbor-prop-delay-thresh 100000)

# Refusals (exit 2, message naming the option), before any socket opens.
refused() {  # OPTION ARGS...
  local opt="$1" rc=0
  shift
  ip netns exec "$nsr" "$layersec" ptp "$@" --duration 1 > "$work/refused.out" 2> "$work/refused.err" || rc=$?
  [[ $rc == 2 ]] || fail "ptp $* exited with $rc, not 2"
  grep -q -- "$opt" "$work/refused.err" || fail "ptp $*: the message does not name $opt: $(cat "$work/refused.err")"
}
refused --iface --iface "$ifr0" --iface "$ifr0"
refused --iface --iface "$ifr0" --iface "nosuch$id"
refused --iface --iface "$ifr0" --iface "$ifr1" --iface lo --iface a3 --iface a4 --iface a5 --iface a6 --iface a7 --iface a8
refused --role --iface "$ifr0" --iface "$ifr1" --profile automotive --role gm
refused --role --iface "$ifr0" --iface "$ifr1" --profile automotive --role auto
refused --role --iface "$ifr0" --iface "$ifr1" --profile gptp --role slave
refused --role --iface "$ifr0" --role relay
echo "refusals (same interface twice, unknown interface, 9 interfaces, --role for a relay): exit 2, option named"

stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}

# Reads the slave's and the relay's JSON lines: prints
#   state slave_seconds err_rms grandmaster relay_gm fwd1 recv0 drops0 drops1 res_p50 res_max
relay_stats() {  # SLAVE_OUT RELAY_OUT
  "$py" - "$1" "$2" <<'EOF'
import json, math, sys
def rows(path):
    return [json.loads(l) for l in open(path) if l.startswith("{")]
s, r = rows(sys.argv[1]), rows(sys.argv[2])
half = s[len(s) // 2:]
err = [x["offset_to_realtime_ns"] for x in half if x.get("state") == "slave" and x.get("offset_to_realtime_ns") is not None]
rms = f"{math.sqrt(sum(v * v for v in err) / len(err)):.0f}" if err else "none"
last_r = r[-1] if r else {}
ports = last_r.get("ports", [{}, {}])
res = [x["residence_ns"] for x in r[len(r) // 2:] if x.get("residence_ns", {}).get("p50") is not None]
p50 = sorted(x["p50"] for x in res)[len(res) // 2] if res else "none"
mx = max(x["max"] for x in res) if res else "none"
print(s[-1]["state"] if s else "none", sum(1 for x in half if x.get("state") == "slave"), rms,
      s[-1].get("grandmaster") if s else "none", last_r.get("grandmaster", "none"),
      ports[1].get("syncs_forwarded", 0), ports[0].get("syncs_received", 0),
      json.dumps(ports[0].get("drops", {}), separators=(",", ":")),
      json.dumps(ports[1].get("drops", {}), separators=(",", ":")), p50, mx)
EOF
}

below() { "$py" -c "import sys; sys.exit(0 if '$1' != 'none' and abs(float('$1')) < float('$2') else 1)"; }

# --- a. layersec GM -> layersec relay -> layersec slave
run_layersec_chain() {  # PROFILE TAG [ATTACK]
  local profile="$1" tag="$2" attack="${3:-}"
  local gm_role=(--role gm) slave_role=(--role slave)
  ip netns exec "$nsg" "$layersec" ptp --iface "$ifg" --profile "$profile" "${gm_role[@]}" "${common[@]}" \
    --duration $((seconds + 2)) > "$work/gm_$tag.out" 2> "$work/gm_$tag.err" &
  pids+=($!)
  ip netns exec "$nsr" "$layersec" ptp --iface "$ifr0" --iface "$ifr1" --profile "$profile" "${common[@]}" \
    --duration $((seconds + 1)) > "$work/relay_$tag.out" 2> "$work/relay_$tag.err" &
  pids+=($!)
  if [[ -n "$attack" ]]; then
    # Start the attack once the chain had time to lock (half-way).
    ( sleep $((seconds / 2 - 3))
      ip netns exec "$nss" "$py" "$lib/ptp_attack.py" sync "$ifs" 5 0200000000000bad 0 > "$work/attack_master_port.out"
    ) &
    pids+=($!)
    ( sleep $((seconds / 2 - 3))
      ip netns exec "$nsg" "$py" "$lib/ptp_attack.py" hijack "$ifg" 5 0200000000000bad 1000000000 > "$work/attack_second_gm.out"
    ) &
    pids+=($!)
  fi
  ip netns exec "$nss" "$layersec" ptp --iface "$ifs" --profile "$profile" "${slave_role[@]}" "${common[@]}" \
    --duration "$seconds" > "$work/slave_$tag.out" 2> "$work/slave_$tag.err" || fail "layersec ptp (slave, $tag) exited with $?"
  local p
  for p in "${pids[@]}"; do wait "$p" || fail "a process of the $tag chain exited with $? (see the .err files)"; done
  pids=()
  read -r state slave_s err gm_seen relay_gm fwd recv drops0 drops1 res_p50 res_max < <(relay_stats "$work/slave_$tag.out" "$work/relay_$tag.out")
  echo "layersec GM -> layersec relay -> layersec slave, $profile, ${seconds} s: slave ${state} (${slave_s} s of the second half), true error rms ${err} ns over the second half; relay forwarded ${fwd} Syncs of ${recv} received, residence p50 ${res_p50} ns max ${res_max} ns; relay drops port 0 ${drops0} port 1 ${drops1}"
  echo "  relay: $(grep "$ifr1" "$work/relay_$tag.err" | tail -n 1)"
  [[ "$state" == slave ]] || fail "$tag: the slave did not end in the slave state (last: $state)"
  [[ "$slave_s" -ge $((seconds / 2 - 3)) ]] || fail "$tag: the slave was synchronised for only $slave_s of the last $((seconds / 2)) s"
  below "$err" "$max_err" || fail "$tag: the slave's true error rms ${err} ns is not below ${max_err} ns"
  [[ "$relay_gm" == "$gm_id" ]] || fail "$tag: the relay follows ${relay_gm}, not the GM ${gm_id}"
  if [[ "$profile" == gptp ]]; then
    [[ "$gm_seen" == "$gm_id" ]] || fail "$tag: the slave's grandmaster is ${gm_seen}, not the GM ${gm_id}"
  else
    [[ "$gm_seen" == "$relay_id" ]] || fail "$tag: the automotive slave follows ${gm_seen}, not the relay's port ${relay_id}"
  fi
  [[ "$fwd" -gt $((seconds * 4)) ]] || fail "$tag: the relay forwarded only ${fwd} Syncs"
  [[ "$fwd" -le "$recv" ]] || fail "$tag: the relay forwarded ${fwd} Syncs but accepted only ${recv}"
}

parts="${RELAY_PARTS:-abc}"  # for a manual run of some parts only
if [[ $parts == *a* ]]; then
  run_layersec_chain automotive automotive
  run_layersec_chain gptp gptp
fi

# --- c. bad input on the relay (automotive)
if [[ $parts == *c* ]]; then
run_layersec_chain automotive attack attack
echo "  attack: $(cat "$work/attack_master_port.out") / $(cat "$work/attack_second_gm.out")"
"$py" - "$drops0" "$drops1" <<'EOF' || fail "the relay did not count the injected frames: port 0 ${drops0}, port 1 ${drops1}"
import json, sys
d0, d1 = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ok = d0.get("announce_disabled", 0) > 0 and d0.get("second_gm", 0) > 0 and d1.get("wrong_role", 0) > 0
sys.exit(0 if ok else 1)
EOF
echo "  injected frames dropped and counted, not forwarded: met"
fi

# --- b. interop with ptp4l
cfgdir=/usr/share/doc/linuxptp/configs
if [[ $parts != *b* ]]; then
  :
elif ! command -v ptp4l >/dev/null 2>&1 || ! command -v pmc >/dev/null 2>&1; then
  echo "SKIP (part b): ptp4l or pmc is not installed (Debian: linuxptp)"
elif [[ ! -f $cfgdir/gPTP.cfg || ! -f $cfgdir/automotive-slave.cfg ]]; then
  echo "SKIP (part b): linuxptp's example configs are missing in $cfgdir"
else
  ptp4l_cfg() {  # SRC OUT UDS EXTRA...
    local src="$1" out="$2" uds="$3"
    shift 3
    grep -v -E '^(neighborPropDelayThresh|priority1|free_running|uds_address)' "$src" > "$out"
    { echo "neighborPropDelayThresh 100000"; echo "uds_address $uds"; printf '%s\n' "$@"; } >> "$out"
  }
  # The ptp4l slave's state, grandmaster and master_offset over its UDS, 4 times a second.
  pmc_poll() {  # NS UDS OUT
    while :; do
      ip netns exec "$1" pmc -u -b 0 -t 1 -s "$2" 'GET TIME_STATUS_NP' 'GET PORT_DATA_SET' 2>/dev/null |
        awk '$1 == "master_offset" {o = $2} $1 == "gmIdentity" {g = $2} $1 == "portState" {s = $2}
             END {if (o != "") print o, g, s}' >> "$3" || true
      sleep 0.25
    done
  }
  # rms of master_offset over the second half, the last grandmaster and port state.
  ptp4l_stats() {
    "$py" - "$1" <<'EOF'
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 3]
half = [float(r[0]) for r in rows[len(rows) // 2:] if r[2] in ("SLAVE", "UNCALIBRATED")]
print(f"{math.sqrt(sum(x * x for x in half) / len(half)):.0f}" if half else "none", len(half),
      rows[-1][1] if rows else "none", rows[-1][2] if rows else "none")
EOF
  }
  run_ptp4l_slave_chain() {  # TAG PROFILE GM_KIND
    local tag="$1" profile="$2" gm_kind="$3" slave_cfg want_gm
    if [[ "$gm_kind" == ptp4l ]]; then
      ptp4l_cfg "$cfgdir/gPTP.cfg" "$work/gm_$tag.cfg" "$work/gm_$tag.uds" "priority1 246"
      ip netns exec "$nsg" ptp4l -S -m -f "$work/gm_$tag.cfg" -i "$ifg" > "$work/gm_$tag.out" 2>&1 &
      pids+=($!)
      want_gm=020000.fffe.5e0001
    else
      ip netns exec "$nsg" "$layersec" ptp --iface "$ifg" --profile "$profile" --role gm "${common[@]}" --minor-version 0 \
        --duration $((seconds + 2)) > "$work/gm_$tag.out" 2> "$work/gm_$tag.err" &
      pids+=($!)
      want_gm=""  # automotive: no Announce, so ptp4l names itself as grandmaster
    fi
    if [[ "$profile" == gptp ]]; then
      ptp4l_cfg "$cfgdir/gPTP.cfg" "$work/slave_$tag.cfg" "$work/slave_$tag.uds" "priority1 248" "free_running 1" "slaveOnly 1"
    else
      ptp4l_cfg "$cfgdir/automotive-slave.cfg" "$work/slave_$tag.cfg" "$work/slave_$tag.uds" "free_running 1"
    fi
    ip netns exec "$nsr" "$layersec" ptp --iface "$ifr0" --iface "$ifr1" --profile "$profile" "${common[@]}" \
      --minor-version 0 --duration $((seconds + 1)) > "$work/relay_$tag.out" 2> "$work/relay_$tag.err" &
    pids+=($!)
    ip netns exec "$nss" ptp4l -S -m -f "$work/slave_$tag.cfg" -i "$ifs" > "$work/ptp4l_slave_$tag.out" 2>&1 &
    pids+=($!)
    : > "$work/pmc_$tag.txt"
    pmc_poll "$nss" "$work/slave_$tag.uds" "$work/pmc_$tag.txt" &
    pids+=($!)
    sleep "$seconds"
    stop_all
    read -r p_rms p_n p_gm p_state < <(ptp4l_stats "$work/pmc_$tag.txt")
    local fwd
    fwd="$("$py" -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]; print(r[-1]['ports'][1]['syncs_forwarded'] if r else 0)" "$work/relay_$tag.out")"
    echo "$gm_kind GM -> layersec relay -> ptp4l slave, $profile, ${seconds} s: ptp4l slave ${p_state} (grandmaster ${p_gm}), master_offset rms ${p_rms} ns over ${p_n} samples of the second half; relay forwarded ${fwd} Syncs"
    # free_running 1 never ends UNCALIBRATED (ptp4l's servo is not run), so
    # the port state is UNCALIBRATED or SLAVE; what counts is that it
    # measures against the GM through the relay.
    [[ "$p_state" == SLAVE || "$p_state" == UNCALIBRATED ]] ||
      fail "$tag: the ptp4l slave is ${p_state}, not SLAVE/UNCALIBRATED (see ptp4l_slave_$tag.out)"
    [[ -z "$want_gm" || "${p_gm,,}" == "$want_gm" ]] || fail "$tag: the ptp4l slave's grandmaster is ${p_gm}, not ${want_gm}"
    [[ "$p_n" -ge 8 ]] || fail "$tag: the ptp4l slave gave only ${p_n} offsets in the second half"
    below "$p_rms" "$max_err" || fail "$tag: the ptp4l slave's offset rms ${p_rms} ns is not below ${max_err} ns"
    [[ "$fwd" -gt $((seconds * 2)) ]] || fail "$tag: the relay forwarded only ${fwd} Syncs"
  }
  run_ptp4l_slave_chain ptp4l_gptp gptp ptp4l
  run_ptp4l_slave_chain layersec_auto automotive layersec
fi
echo "PASS ptp_relay_netns"
