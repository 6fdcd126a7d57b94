#!/usr/bin/env bash
# Three `layersec macsec up --mka` members of one connectivity association on
# a Linux bridge (the hybrid paper's zonal network: the zonal switch, key
# server priority 1, and two ECUs, priority 100), GCM-AES-256:
#   - the switch is elected key server by all three and every member
#     transmits with the same SAK; UDP between the ECUs and to the switch;
#   - an ECU is killed (-9): the switch excludes it after the MKA life time
#     (1.5 s here) and rekeys without it (reason member_left); the other ECU
#     follows, and traffic between the remaining two goes on;
#   - the time from the kill to the exclusion is printed.
# The bridge forwards the PAE group address (group_fwd_mask bit 3), as an
# 802.1X-aware switch port would. Root only; skips (77) otherwise.
# Usage: bash tests/cli/mka_bridge_netns.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/lib/netns.sh"
source "$here/lib/macsec.sh"
source "$here/lib/mka.sh"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: mka_bridge_netns needs root (namespaces, TAP, AF_PACKET)"; exit 77; fi
for t in ip openssl /usr/bin/python3; do
  command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t is not installed"; exit 77; }
done

id=$$
hub="mbH$id"; nss="mbS$id"; ns1="mbE$id"; ns2="mbF$id"
netns_init mka_bridge
netns_add "$hub" "$nss" "$ns1" "$ns2"
netns_bridge "$hub" mbbr
ip -n "$hub" link set mbbr type bridge group_fwd_mask 8
netns_port "$hub" mbbr "$nss" mbvs "mbps$id"
netns_port "$hub" mbbr "$ns1" mbv1 "mbp1$id"
netns_port "$hub" mbbr "$ns2" mbv2 "mbp2$id"
ip -n "$nss" link set mbvs address 02:00:00:18:10:01
ip -n "$ns1" link set mbv1 address 02:00:00:18:10:02
ip -n "$ns2" link set mbv2 address 02:00:00:18:10:03

mka_key "$work/cak.key"
ckn=7a6f6e616c
timers='"timers": {"hello_ms": 500, "life_ms": 1500}'
mka_config "$work/sw.json" cak.key "$ckn" 1 gcm-aes-256 "$timers"
mka_config "$work/e1.json" cak.key "$ckn" 100 gcm-aes-256 "$timers"
mka_config "$work/e2.json" cak.key "$ckn" 100 gcm-aes-256 "$timers"

start_mka "$nss" mbvs mbms "$work/sw.json" sw --stats-interval 0.5; pid_s=$last_pid
start_mka "$ns1" mbv1 mbm1 "$work/e1.json" e1 --stats-interval 0.5; pid_1=$last_pid
start_mka "$ns2" mbv2 mbm2 "$work/e2.json" e2 --stats-interval 0.5; pid_2=$last_pid
ip -n "$nss" addr add 10.18.16.1/24 dev mbms
ip -n "$ns1" addr add 10.18.16.2/24 dev mbm1
ip -n "$ns2" addr add 10.18.16.3/24 dev mbm2

# Converged: the switch is key server for all, one SAK, two live peers each.
for _ in $(seq 200); do
  fs="$(last_field "$work/sw.out" mka_sak_transmitting sak_fingerprint)"
  f1="$(last_field "$work/e1.out" mka_sak_transmitting sak_fingerprint)"
  f2="$(last_field "$work/e2.out" mka_sak_transmitting sak_fingerprint)"
  [[ -n "$fs" && "$fs" == "$f1" && "$fs" == "$f2" ]] &&
    [[ "$(last_stats "$work/sw.out" mka.live_peers)" == 2 ]] && break
  sleep 0.05
done
[[ -n "$fs" && "$fs" == "$f1" && "$fs" == "$f2" ]] || fail "no common SAK: switch $fs, ecu1 $f1, ecu2 $f2"
for m in sw e1 e2; do
  [[ "$(last_field "$work/$m.out" mka_key_server_elected sci)" == 0200001810010001 ]] || fail "$m did not elect the switch"
done
for m in sw e1 e2; do wait_stat "$work/$m.out" mka.live_peers 2 5; done
echo "ok: three members, the switch is key server, one SAK $fs"
reach "$ns1" "$ns2" 10.18.16.3 || fail "ecu1 -> ecu2 failed"
reach "$ns2" "$nss" 10.18.16.1 || fail "ecu2 -> switch failed"
echo "ok: UDP ecu1 -> ecu2 and ecu2 -> switch (and back) through the TAPs"

# ECU 2 leaves (kill -9): excluded after the life time, a new SAK without it.
kill_mono="$(/usr/bin/python3 -c 'import time; print(time.monotonic_ns())')"
kill -9 "$pid_2"
wait "$pid_2" 2>/dev/null || true
for _ in $(seq 100); do
  [[ "$(count_events "$work/sw.out" mka_peer_lost)" -ge 1 ]] && break
  sleep 0.05
done
[[ "$(count_events "$work/sw.out" mka_peer_lost)" -ge 1 ]] || fail "the switch never excluded ecu2"
[[ "$(last_field "$work/sw.out" mka_peer_lost sci)" == 0200001810030001 ]] || fail "the switch lost the wrong member"
lost_t="$(last_field "$work/sw.out" mka_peer_lost t_ns)"
echo "    exclusion: $(( (lost_t - kill_mono) / 1000000 )) ms after kill -9 (life time 1500 ms, hello 500 ms)"
for _ in $(seq 100); do
  fs2="$(last_field "$work/sw.out" mka_sak_transmitting sak_fingerprint)"
  f12="$(last_field "$work/e1.out" mka_sak_transmitting sak_fingerprint)"
  [[ "$fs2" != "$fs" && "$fs2" == "$f12" ]] && break
  sleep 0.05
done
[[ "$fs2" != "$fs" && "$fs2" == "$f12" ]] || fail "no new common SAK after the leave (switch $fs2, ecu1 $f12)"
[[ "$(last_field "$work/sw.out" mka_sak_generated reason)" == member_left ]] ||
  fail "the last rekey's reason is $(last_field "$work/sw.out" mka_sak_generated reason)"
wait_stat "$work/sw.out" mka.live_peers 1 5
[[ "$(last_stats "$work/sw.out" rx_scs.0.sci)" == 0200001810020001 ]] || fail "the switch has no receive SC for ecu1"
if last_stats "$work/sw.out" rx_scs.1.sci >/dev/null 2>&1; then fail "the switch kept a receive SC for ecu2"; fi
reach "$ns1" "$nss" 10.18.16.1 || fail "ecu1 -> switch failed after the leave"
echo "ok: ecu2 excluded, new SAK $fs2 (member_left), ecu1 and the switch carry on"
kill -TERM "$pid_1"; wait "$pid_1" || fail "ecu1 did not exit cleanly"
kill -TERM "$pid_s"; wait "$pid_s" || fail "the switch did not exit cleanly"
echo "PASS: mka_bridge_netns"
