#!/usr/bin/env bash
# Interop of `layersec macsec up --mka` with stock Debian wpa_supplicant 2.10
# (IEEE 802.1X-2020 MKA, pre-shared CAK/CKN): the real wpa_supplicant on a
# veth in its own namespace with ../shared/tools/wpas-mka (an LD_PRELOAD shim
# standing in for the kernel's macsec driver and logging the SAKs it installs),
# layersec as key server (priority 10; wpa_supplicant mka_priority 255),
# GCM-AES-128 and GCM-AES-256, SAK lifetime 2 s:
#   - the SAK wpa_supplicant installs (attribute n4 of its ADD_TXSA lines)
#     has the fingerprint of ours, for the first SAK and after a rekey
#     seen on both sides (two distinct SAKs on each);
#   - the peer lists agree (our live peer is wpa_supplicant's MI, its live
#     peer is ours; tshark dissects the MKPDUs with our CKN);
#   - data plane: frames our SecY protected, captured on the wire, decrypt
#     in scapy's MACsec layer with the SAK wpa_supplicant installed for our
#     SCI, and carry the datagrams we sent.
# The other role is mka_wpas_keyserver.sh. Skips (77) without root,
# wpa_supplicant, tshark, gcc/pkg-config and the libnl dev packages (the
# shim), or scapy. Usage: bash tests/cli/mka_wpas_interop.sh /path/to/layersec
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wpas_test=mka_wpas_interop
source "$here/lib/netns.sh"
source "$here/lib/macsec.sh"
source "$here/lib/mka.sh"
source "$here/lib/mka_wpas.sh"

# ---------------------------------------------------------------- layersec key server
ks_layersec() {  # SUITE CAKBYTES
  local suite="$1" n="$2" c="k${2}"
  local nsa="mwA$c$id" nsw="mwW$c$id" va="mwa$c$id" vw="mww$c$id" ma="mwm$c$id"
  netns_add "$nsa" "$nsw"
  netns_veth "$nsa" "$va" 02:00:00:18:01:01 "$nsw" "$vw" 02:00:00:18:01:02
  (umask 077 && openssl rand -hex "$n" >"$work/$c.key")
  wpas_conf "$work/$c.conf" "$(cat "$work/$c.key")" 255 "$work/ctrl_$c"
  mka_config "$work/$c.json" "$c.key" "$ckn" 10 "$suite" '"timers": {"rekey_interval_ms": 2000}'
  capture "$nsw" "$vw" "$work/$c.pcap" 30
  start_wpas "$nsw" "$vw" "$work/$c.conf" "$c" 30
  start_mka "$nsa" "$va" "$ma" "$work/$c.json" "$c" --stats-interval 0.5
  local pid=$last_pid
  ip -n "$nsa" addr add 10.18.1.1/24 dev "$ma"
  ip -n "$nsa" neigh add 10.18.1.2 lladdr 02:00:00:18:01:02 dev "$ma"
  wait_events "$work/$c.out" mka_sak_transmitting 1 10
  wait_wpas_saks "$c" 1
  local first ours
  first="$(sak_fps "$c" | awk 'NR == 1')"
  ours="$(first_field "$work/$c.out" mka_sak_transmitting sak_fingerprint)"
  [[ "$first" == "$ours" ]] || fail "$suite: wpa_supplicant's first SAK $first, ours $ours"
  send_marked "$nsa" 10.18.1.2 7300 20 "first-sak-$c"
  # A rekey (SAK lifetime 2 s) seen on both.
  wait_wpas_saks "$c" 2 10
  wait_events "$work/$c.out" mka_sak_transmitting 2 10
  sleep 1
  local second last_ours
  second="$(sak_fps "$c" | awk -v f="$first" '$0 != f && !n++')"
  last_ours="$(nth_field "$work/$c.out" mka_sak_transmitting 1 sak_fingerprint)"
  [[ -n "$second" && "$second" == "$last_ours" ]] || fail "$suite: after the rekey wpa_supplicant has $second, we have $last_ours"
  send_marked "$nsa" 10.18.1.2 7300 20 "second-sak-$c"
  # Peer lists.
  local our_mi wpas_mi our_live wpas_live
  our_mi="$(last_stats "$work/$c.out" mka.mi)"
  our_live="$(last_stats "$work/$c.out" mka.peers.0.mi)"
  [[ "$(last_stats "$work/$c.out" mka.peers.0.live)" == True ]] || fail "$suite: wpa_supplicant is not our live peer"
  wpas_mi="$("$py" "$helper" wpas-mi "$work/$c.wpas")"
  wpas_live="$("$py" "$helper" wpas-live "$work/$c.wpas")"
  [[ "$our_live" == "$wpas_mi" ]] || fail "$suite: our live peer $our_live, wpa_supplicant's MI $wpas_mi"
  [[ "$wpas_live" == "$our_mi" ]] || fail "$suite: wpa_supplicant's live peers '$wpas_live', our MI $our_mi"
  [[ "$(last_stats "$work/$c.out" mka.live_peers)" == 1 ]] || fail "$suite: live peer count"
  kill -TERM "$pid"; wait "$pid" || fail "layersec ($c) did not exit cleanly"
  stop_bg "$wpas_pid"
  stop_bg "$capture_pid"
  # tshark: our MKPDUs list wpa_supplicant's MI and carry our CKN; and the other way round.
  local mkas
  mkas="$("$py" "$helper" mka "$work/$c.pcap")"
  grep -q "^0200001801010001 $our_mi .*$wpas_mi.* $ckn$" <<<"$mkas" || fail "$suite: tshark: no MKPDU of ours listing $wpas_mi"
  grep -q " $wpas_mi .*$our_mi.* $ckn$" <<<"$mkas" || fail "$suite: tshark: no MKPDU of wpa_supplicant listing $our_mi"
  decrypt_check "$work/$c.pcap" "$c" 0200001801010001 "first-sak-$c" 10
  decrypt_check "$work/$c.pcap" "$c" 0200001801010001 "second-sak-$c" 10
  echo "ok: layersec key server, $suite: wpa_supplicant installed $first then $second, as we did; peer lists agree;" \
       "$(echo "$mkas" | wc -l) MKPDUs dissected; our frames decrypt in scapy with its SAKs"
}

ks_layersec gcm-aes-128 16
ks_layersec gcm-aes-256 32
echo "PASS: mka_wpas_interop"
