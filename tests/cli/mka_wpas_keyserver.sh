#!/usr/bin/env bash
# Interop of `layersec macsec up --mka` with stock Debian wpa_supplicant 2.10
# as the key server (mka_priority 5; ours 20), through ../shared/tools/wpas-mka
# (see mka_wpas_interop.sh for the other role):
#   GCM-AES-128 on a bridge: layersec A agrees wpa_supplicant's SAK (same
#   fingerprint as its ADD_TXSA n4), elects it key server and counts it
#   live; layersec B joins, the key server rekeys and both A and B install
#   and transmit with wpa_supplicant's new SAK (a rekey seen on
#   wpa_supplicant, A and B); wpa_supplicant's live peers are A and B; A's
#   frames decrypt in scapy with wpa_supplicant's SAKs.
#   Our side on GCM-AES-256: wpa_supplicant 2.10 has no setting for the
#   suite it distributes (macsec_csindex came after 2.10) and sends
#   GCM-AES-128; we refuse that SAK (cipher_suite_mismatch), install nothing
#   and send nothing: fail closed.
# Skips (77) like mka_wpas_interop.sh. Usage: bash tests/cli/mka_wpas_keyserver.sh /path/to/layersec
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wpas_test=mka_wpas_keyserver
source "$here/lib/netns.sh"
source "$here/lib/macsec.sh"
source "$here/lib/mka.sh"
source "$here/lib/mka_wpas.sh"

# ---------------------------------------------------------------- wpa_supplicant key server
ks_wpas() {
  local c=w128 hub="mwH$id" nsw="mwWw$id" nsa="mwAw$id" nsb="mwBw$id"
  netns_add "$hub" "$nsw" "$nsa" "$nsb"
  netns_bridge "$hub" mwbr
  # 802.1X-2020 §11.1.1: a bridge does not forward the PAE group address unless told to.
  ip -n "$hub" link set mwbr type bridge group_fwd_mask 8
  netns_port "$hub" mwbr "$nsw" mwvw "mwpw$id"
  netns_port "$hub" mwbr "$nsa" mwva "mwpa$id"
  netns_port "$hub" mwbr "$nsb" mwvb "mwpb$id"
  ip -n "$nsw" link set mwvw address 02:00:00:18:02:0a
  ip -n "$nsa" link set mwva address 02:00:00:18:02:01
  ip -n "$nsb" link set mwvb address 02:00:00:18:02:02
  (umask 077 && openssl rand -hex 16 >"$work/$c.key")
  wpas_conf "$work/$c.conf" "$(cat "$work/$c.key")" 5 "$work/ctrl_$c"
  mka_config "$work/${c}a.json" "$c.key" "$ckn" 20 gcm-aes-128
  mka_config "$work/${c}b.json" "$c.key" "$ckn" 20 gcm-aes-128
  capture "$nsw" mwvw "$work/$c.pcap" 30
  start_wpas "$nsw" mwvw "$work/$c.conf" "$c" 30
  start_mka "$nsa" mwva mwma "$work/${c}a.json" "${c}a" --stats-interval 0.5
  local pid_a=$last_pid
  ip -n "$nsa" addr add 10.18.2.1/24 dev mwma
  ip -n "$nsa" neigh add 10.18.2.10 lladdr 02:00:00:18:02:0a dev mwma
  wait_events "$work/${c}a.out" mka_sak_transmitting 1 10
  wait_wpas_saks "$c" 1
  local first_sak_at=$SECONDS
  local first ours_a
  first="$(sak_fps "$c" | awk 'NR == 1')"
  ours_a="$(last_field "$work/${c}a.out" mka_sak_installed sak_fingerprint)"
  [[ "$first" == "$ours_a" ]] || fail "wpa key server: its SAK $first, A installed $ours_a"
  local ks_sci
  ks_sci="$(last_field "$work/${c}a.out" mka_key_server_elected sci)"
  [[ "$ks_sci" == 02000018020a0001 ]] || fail "A elected $ks_sci, not wpa_supplicant"
  send_marked "$nsa" 10.18.2.10 7300 20 "wpas-first"
  # B joins: the key server distributes a new SAK; A and B install it.
  # wpa_supplicant 2.10 generates no SAK within MKA's life time (6 s) of the
  # previous distribution and then forgets that a member joined ("Life time
  # has not elapsed since prior SAK distributed"): B joins after that.
  while (( SECONDS - first_sak_at < 8 )); do sleep 0.5; done
  start_mka "$nsb" mwvb mwmb "$work/${c}b.json" "${c}b" --stats-interval 0.5
  local pid_b=$last_pid
  wait_wpas_saks "$c" 2 15  # B live to wpa_supplicant (2 s hellos), then its rekey
  local second
  second="$(sak_fps "$c" | awk -v f="$first" '$0 != f && !n++')"
  for _ in $(seq 100); do
    [[ "$(last_field "$work/${c}a.out" mka_sak_transmitting sak_fingerprint)" == "$second" &&
       "$(last_field "$work/${c}b.out" mka_sak_transmitting sak_fingerprint)" == "$second" ]] && break
    sleep 0.1
  done
  [[ "$(last_field "$work/${c}a.out" mka_sak_transmitting sak_fingerprint)" == "$second" ]] ||
    fail "A does not transmit with wpa_supplicant's new SAK $second"
  [[ "$(last_field "$work/${c}b.out" mka_sak_transmitting sak_fingerprint)" == "$second" ]] ||
    fail "B does not transmit with wpa_supplicant's new SAK $second"
  send_marked "$nsa" 10.18.2.10 7300 20 "wpas-second"
  sleep 0.6
  local wpas_mi wpas_live mi_a mi_b
  wpas_mi="$("$py" "$helper" wpas-mi "$work/$c.wpas")"
  wpas_live="$("$py" "$helper" wpas-live "$work/$c.wpas")"
  mi_a="$(last_stats "$work/${c}a.out" mka.mi)"
  mi_b="$(last_stats "$work/${c}b.out" mka.mi)"
  [[ "$wpas_live" == *"$mi_a"* && "$wpas_live" == *"$mi_b"* ]] ||
    fail "wpa_supplicant's live peers '$wpas_live' lack A $mi_a or B $mi_b"
  wait_stat "$work/${c}a.out" mka.live_peers 2 5
  [[ "$(peer_of "$work/${c}a.out" "$wpas_mi")" == "live 5" ]] || fail "wpa_supplicant ($wpas_mi) is not a live peer of A"
  kill -TERM "$pid_b"; wait "$pid_b" || fail "B did not exit cleanly"
  kill -TERM "$pid_a"; wait "$pid_a" || fail "A did not exit cleanly"
  stop_bg "$wpas_pid"
  stop_bg "$capture_pid"
  decrypt_check "$work/$c.pcap" "$c" 0200001802010001 "wpas-first" 10
  decrypt_check "$work/$c.pcap" "$c" 0200001802010001 "wpas-second" 10
  echo "ok: wpa_supplicant key server, GCM-AES-128: A installed its SAK $first; B joined, it rekeyed to $second," \
       "installed by A and B; its live peers are A and B; A's frames decrypt in scapy with its SAKs"

  # Our side on GCM-AES-256 against wpa_supplicant 2.10's GCM-AES-128 SAKs.
  local c2=w256 nsw2="mwWx$id" nsa2="mwAx$id"
  netns_add "$nsw2" "$nsa2"
  netns_veth "$nsw2" "mwvx$id" 02:00:00:18:03:0a "$nsa2" "mwax$id" 02:00:00:18:03:01
  (umask 077 && openssl rand -hex 32 >"$work/$c2.key")
  wpas_conf "$work/$c2.conf" "$(cat "$work/$c2.key")" 5 "$work/ctrl_$c2"
  mka_config "$work/$c2.json" "$c2.key" "$ckn" 20 gcm-aes-256
  start_wpas "$nsw2" "mwvx$id" "$work/$c2.conf" "$c2" 30
  start_mka "$nsa2" "mwax$id" "mwmx$id" "$work/$c2.json" "$c2" --stats-interval 0.5
  local pid_x=$last_pid
  ip -n "$nsa2" addr add 10.18.3.1/24 dev "mwmx$id"
  sleep 4.5
  send_marked "$nsa2" 10.18.3.10 7300 5 "no-sak"
  [[ "$(last_stats "$work/$c2.out" mka.drops.cipher_suite_mismatch)" -gt 0 ]] ||
    fail "GCM-AES-256 vs wpa_supplicant: no cipher_suite_mismatch drop counted"
  [[ "$(count_events "$work/$c2.out" mka_sak_installed)" == 0 ]] || fail "GCM-AES-256: a GCM-AES-128 SAK was installed"
  [[ "$(last_stats "$work/$c2.out" link.tx_sent)" == 0 ]] || fail "GCM-AES-256: frames were sent without a SAK"
  # Same CAK: its MKPDUs verify (a potential peer), but those carrying the
  # SAK we refuse are dropped whole, liveness included, so whether it was
  # ever live depends on which MKPDU came first.
  [[ "$(count_events "$work/$c2.out" mka_peer_potential)" -ge 1 ]] ||
    fail "GCM-AES-256: wpa_supplicant's MKPDUs did not verify (the CAK is the same)"
  [[ "$(last_stats "$work/$c2.out" mka.drops.bad_icv)" == 0 ]] || fail "GCM-AES-256: ICV failures"
  kill -TERM "$pid_x"; wait "$pid_x" || fail "layersec ($c2) did not exit cleanly"
  stop_bg "$wpas_pid"
  echo "ok: wpa_supplicant key server, our side GCM-AES-256: its GCM-AES-128 SAK refused" \
       "($(last_stats "$work/$c2.out" mka.drops.cipher_suite_mismatch) cipher_suite_mismatch drops), nothing installed or sent"
}

ks_wpas
echo "PASS: mka_wpas_keyserver"
