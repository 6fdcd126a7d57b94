#!/usr/bin/env bash
# gPTP beside an MKA-keyed SecY across `kill -9` and restart (issue 17):
# `layersec macsec up --mka FILE --ptp FILE` in two network namespaces on a
# plain veth, a grandmaster that is also the MKA key server (priority 10) and
# a slave (priority 20), "protect": true (gPTP only inside the SecY),
# automotive profile (static roles, Sync 8/s). Nothing is carried over a
# restart: MKA keeps no PN state file (every SAK is fresh and a restart
# takes a new member identifier, docs/mka.md), so the restart is the same
# command with the same files.
#   1. Both synchronise. The GM's and the slave's MACsec frames are recorded
#      on the wire.
#   2. kill -9 the slave, restart it: it gets a new SAK (not the old one, the
#      GM transmits with it) and its offset converges again (the time from
#      the restart to its SAK and to its first in-bound offset line are
#      printed); the frames recorded before the kill, replayed after the
#      restart in both directions, are all rejected by the SecYs.
#   3. The GM's frames recorded again; kill -9 the GM: the slave stops
#      following (syncReceiptTimeout), keeps its clock's frequency, no
#      SecY delivers anything; restart the GM: a new SAK on both ends, the
#      slave follows again (the time from the GM's restart to the slave's
#      first in-bound offset line and the first offsets are printed); the
#      GM's old frames replayed into the slave are rejected. The GM is away
#      2.5 s (PTP_MKA_RESTART_GM_AWAY_S=S: S seconds).
#   4. A sniffer on the wire from before the first frame to the end saw
#      from both ends only 0x88E5 and 0x888E: never plain 0x88F7, also
#      while an end had no SAK (fresh after a restart, or its peer gone).
# A third member is not tested: 802.1AS runs on point-to-point full-duplex
# links, so a third gPTP end needs a time-aware relay, not a Linux bridge.
# Root only; exits 77 with the reason when root or a tool is missing.
# Usage: bash tests/cli/ptp_mka_restart_netns.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: ptp_mka_restart_netns needs root (namespaces, TAP, AF_PACKET)"; exit 77; fi
for tool in ip openssl /usr/bin/python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
[[ -c /dev/net/tun ]] || { echo "SKIP: no /dev/net/tun"; exit 77; }
lib="$(dirname "${BASH_SOURCE[0]}")/lib"
source "$lib/netns.sh"
source "$lib/macsec.sh"
source "$lib/mka.sh"
py=/usr/bin/python3
rows() { "$py" "$lib/ptp_rows.py" "$@"; }
wire() { "$py" "$lib/wire.py" "$@"; }
mono() { "$py" -c 'import time; print(time.monotonic())'; }
# How long the GM stays away (s); beyond MKA's life time (6 s) the slave
# also loses its peer and its SAK (a manual run, docs/ptp.md).
away="${PTP_MKA_RESTART_GM_AWAY_S:-2.5}"

id=$$
netns_init ptp_mka_restart_netns
mka_key "$work/cak.key"
ckn=6c61796572736563207074702d727374
gmac=02:00:00:7e:00:01; smac=02:00:00:7e:00:02
ghex="${gmac//:/}"; shex="${smac//:/}"
nsg="lkg$id"; nss="lks$id"
netns_add "$nsg" "$nss"
netns_veth "$nsg" "kg$id" "$gmac" "$nss" "ks$id" "$smac"
mka_config "$work/g.mka" cak.key "$ckn" 10 gcm-aes-128
mka_config "$work/s.mka" cak.key "$ckn" 20 gcm-aes-128
for end in g s; do
  role=gm; [[ $end == s ]] && role=slave
  echo "{ \"protect\": true, \"profile\": \"automotive\", \"role\": \"$role\", \"neighbor_prop_delay_thresh_ns\": 100000 }" \
    >"$work/$end.ptp"
done
# Every frame on the wire, from before the first one.
ip netns exec "$nss" "$py" "$lib/wire.py" log "ks$id" "$work/wire.log" &
sniff=$!
pids+=("$sniff")
sleep 0.3

up() {  # end tag
  local ns="$nsg"; [[ $1 == s ]] && ns="$nss"
  START_LINK_FLAG=--mka start_link "$ns" "k$1$id" "lkx$1$id" "$work/$1.mka" "$2" \
    --ptp "$work/$1.ptp" --stats-interval 0.5
}
# record NS IF SRC OUT: SRC's MACsec frames on IF for 1.5 s (background; sets rec_pid)
record() {
  ip netns exec "$1" "$py" "$lib/wire.py" record "$2" "$3" 1.5 "$4" >"$4.n" &
  rec_pid=$!
  pids+=("$rec_pid")
}
# The SecY's rejections of received frames (a last stats line of FILE).
rejected() {
  events "$1" stats | tail -n 1 | "$py" -c 'import json,sys
s=json.loads(sys.stdin.read())["secy"]
print(sum(s[k] for k in ("InPktsLate", "InPktsNotUsingSA", "InPktsUnusedSA", "InPktsNotValid", "InPktsNoSCI", "InPktsUnknownSCI")))'
}
# replay TAG FROM_NS FROM_IF FILE WHAT: replays FILE, and TAG's SecY must reject every frame.
replay() {
  local n before got
  n="$(cat "$4.n")"
  before="$(rejected "$work/$1.out")"
  ip netns exec "$2" "$py" "$lib/wire.py" replay "$3" "$4" >/dev/null
  sleep 1.1
  got=$(($(rejected "$work/$1.out") - before))
  [[ "$got" -ge "$n" ]] || fail "$5: $got of $n replayed frames rejected"
  echo "[${SECONDS}s] ok: $5: $n frames recorded before the kill, replayed after the restart: $got rejected by the SecY"
}
synced='r["state"] == "slave" and r["offset_ns"] is not None and abs(r["offset_ns"]) < 100000'
# first_inbound FILE N0: t_s of the first line after the first N0 that is synchronised
first_inbound() { rows eval "$1" "next(x['t_s'] for x in since($2) if x['state'] == 'slave' and x['offset_ns'] is not None and abs(x['offset_ns']) < 100000)"; }
sak_ms() {  # FILE: ms from mka_started to the first SAK transmitted
  "$py" -c 'import sys; print("%.0f" % ((int(sys.argv[2]) - int(sys.argv[1])) / 1e6))' \
    "$(first_field "$1" mka_started t_ns)" "$(first_field "$1" mka_sak_transmitting t_ns)"
}

# --- 1. both synchronise
up g g1; pid_g=$last_pid
up s s1; pid_s=$last_pid
wait_events "$work/g1.out" mka_sak_transmitting 1 10
wait_events "$work/s1.out" mka_sak_transmitting 1 10
rows wait "$work/s1.out" 15 "$synced and r['syncs'] >= 16" || fail "the slave did not synchronise: $(tail -n 2 "$work/s1.out")"
echo "[${SECONDS}s] ok: synchronised, SAK $(last_field "$work/s1.out" mka_sak_transmitting sak_fingerprint); slave: $(rows eval "$work/s1.out" '{k: r[k] for k in ("state", "offset_ns", "path_delay_ns", "syncs", "clock_steps")}')"
record "$nss" "ks$id" "$ghex" "$work/rec_g1.bin"; rg=$rec_pid
record "$nsg" "kg$id" "$shex" "$work/rec_s1.bin"; rs=$rec_pid
wait "$rg" "$rs"
[[ "$(cat "$work/rec_g1.bin.n")" -ge 10 ]] || fail "recorded only $(cat "$work/rec_g1.bin.n") of the GM's MACsec frames"
[[ "$(cat "$work/rec_s1.bin.n")" -ge 1 ]] || fail "recorded none of the slave's MACsec frames"

# --- 2. kill -9 the slave, restart it
old_fp="$(last_field "$work/s1.out" mka_sak_transmitting sak_fingerprint)"
sak_g=$(count_events "$work/g1.out" mka_sak_transmitting)
no_sa_g="$(last_stats "$work/g1.out" ptp.tx_no_sa)"; sent_g="$(last_stats "$work/g1.out" ptp.frames_out)"
kill -9 "$pid_s"; wait "$pid_s" 2>/dev/null || true
sleep 0.5
up s s2; pid_s=$last_pid
wait_events "$work/s2.out" mka_sak_transmitting 1 10
wait_events "$work/g1.out" mka_sak_transmitting $((sak_g + 1)) 10
new_fp="$(first_field "$work/s2.out" mka_sak_transmitting sak_fingerprint)"
[[ "$new_fp" != "$old_fp" ]] || fail "the restarted slave got the old SAK back ($new_fp)"
grep -q "\"sak_fingerprint\":\"$new_fp\"" <<<"$(events "$work/g1.out" mka_sak_transmitting)" ||
  fail "the GM never transmitted with the slave's new SAK $new_fp"
rows wait "$work/s2.out" 20 "$synced and r['syncs'] >= 16" || fail "the restarted slave did not synchronise: $(tail -n 2 "$work/s2.out")"
s_sak_ms="$(sak_ms "$work/s2.out")"
s_sync_s="$(first_inbound "$work/s2.out" 0)"
echo "[${SECONDS}s] ok: slave kill -9 and restart: new SAK $new_fp (was $old_fp) ${s_sak_ms} ms after its MKA start, first in-bound offset line at ${s_sync_s} s after its start; now: $(rows eval "$work/s2.out" '{k: r[k] for k in ("state", "offset_ns", "syncs", "clock_steps")}')"
echo "   GM meanwhile: state $(rows eval "$work/g1.out" 'r["state"]'), gPTP frames sent $sent_g -> $(last_stats "$work/g1.out" ptp.frames_out), tx_no_sa $no_sa_g -> $(last_stats "$work/g1.out" ptp.tx_no_sa) (the old SAK until the new one), new SAK's reason $(last_field "$work/g1.out" mka_sak_generated reason)"
[[ "$(last_stats "$work/g1.out" ptp.tx_no_sa)" == "$no_sa_g" ]] || fail "the GM lost its transmit SA while the slave restarted"
replay s2 "$nsg" "kg$id" "$work/rec_g1.bin" "GM -> restarted slave"
replay g1 "$nss" "ks$id" "$work/rec_s1.bin" "old slave -> GM"

# --- 3. kill -9 the GM, restart it
record "$nss" "ks$id" "$ghex" "$work/rec_g2.bin"; wait "$rec_pid"
[[ "$(cat "$work/rec_g2.bin.n")" -ge 10 ]] || fail "recorded only $(cat "$work/rec_g2.bin.n") of the GM's MACsec frames"
sak_s=$(count_events "$work/s2.out" mka_sak_transmitting)
n_kill="$(rows count "$work/s2.out")"
syncs_kill="$(rows eval "$work/s2.out" 'r["syncs"]')"
steps_kill="$(rows eval "$work/s2.out" 'r["clock_steps"]')"
kill -9 "$pid_g"; wait "$pid_g" 2>/dev/null || true
sleep "$away"
n_gone="$(rows count "$work/s2.out")"
gone="$(rows eval "$work/s2.out" "[(x['state'], x['syncs'], round(x['freq_ppb'])) for x in since($n_kill)]")"
echo "[${SECONDS}s] slave with the GM gone $away s (state, syncs, freq_ppb a line): $gone"
# Once the Syncs stop (syncReceiptTimeout, 3 intervals) the slave is
# uncalibrated, accepts no Sync and keeps its clock's frequency (holdover).
[[ "$(rows eval "$work/s2.out" "(lambda g: len(g) >= 1 and all(x['syncs'] == g[0]['syncs'] and x['freq_ppb'] == g[0]['freq_ppb'] for x in g))([x for x in since($n_kill) if x['state'] != 'slave'])")" == True &&
   "$(rows eval "$work/s2.out" "r['state']")" != slave ]] ||
  fail "the slave did not stop following, or changed its clock, with the GM gone: $gone"
t_restart="$(mono)"
up g g2; pid_g=$last_pid
wait_events "$work/g2.out" mka_sak_transmitting 1 10
wait_events "$work/s2.out" mka_sak_transmitting $((sak_s + 1)) 10
[[ "$(last_field "$work/s2.out" mka_sak_transmitting sak_fingerprint)" == "$(first_field "$work/g2.out" mka_sak_transmitting sak_fingerprint)" ]] ||
  fail "the slave does not transmit with the restarted GM's SAK"
rows wait "$work/s2.out" 20 "$synced and r['syncs'] >= $syncs_kill + 24" ||
  fail "the slave did not follow the restarted GM: $(tail -n 2 "$work/s2.out")"
g_sak_ms="$(sak_ms "$work/g2.out")"
s_start="$(first_field "$work/s2.out" mka_started t_ns)"
g_sync_s="$(rows eval "$work/s2.out" "'%.1f' % ($s_start / 1e9 + next(x['t_s'] for x in since($n_gone) if x['state'] == 'slave' and x['offset_ns'] is not None and abs(x['offset_ns']) < 100000) - $t_restart)")"
after="$(rows eval "$work/s2.out" "[(x['state'], x['offset_max_ns'] and round(x['offset_max_ns'])) for x in since($n_gone)][:6]")"
echo "[${SECONDS}s] ok: GM kill -9 and restart: SAK ${g_sak_ms} ms after its MKA start, the slave's first in-bound offset line ${g_sync_s} s after the restart (1 s lines); slave (state, largest |offset| of each second) from the restart: $after; clock steps $steps_kill -> $(rows eval "$work/s2.out" 'r["clock_steps"]')"
replay s2 "$nsg" "kg$id" "$work/rec_g2.bin" "old GM -> slave"

# --- 4. the wire, start to end, and the exit reports
kill -TERM "$sniff"; wait "$sniff" || true
types="$(wire types "$work/wire.log" "$ghex" "$shex")"
echo "   EtherTypes from both ends on the wire, whole run: $types"
for kv in $types; do
  case "${kv%%:*}" in 88e5|888e) ;; *) fail "EtherType ${kv%%:*} from an end on the wire ($types)";; esac
done
echo "ok: never plain 0x88F7 (or anything but MACsec and EAPOL) on the wire"
kill -TERM "$pid_g" "$pid_s"
wait "$pid_g" || fail "the GM exited with an error"
wait "$pid_s" || fail "the slave exited with an error"
for f in g2 s2; do rows exit "$work/$f.out" ptp.frames_out >/dev/null || fail "$f: no \"ptp\" in the exit report"; done
echo "[${SECONDS}s] exit reports: slave ptp $(rows exit "$work/s2.out" ptp)"
g_max="$(rows eval "$work/s2.out" "round(max(x['offset_max_ns'] or 0 for x in since($n_gone)[:3]))")"
echo "RESULT slave_restart_sak_ms=$s_sak_ms slave_restart_inbound_s=$s_sync_s gm_restart_sak_ms=$g_sak_ms gm_restart_inbound_s=$g_sync_s gm_restart_max_offset_3s_ns=$g_max"
echo "PASS: ptp_mka_restart_netns"
