#!/usr/bin/env bash
# Runtime SA switching through `layersec macsec up` + SIGHUP: two network
# namespaces joined by a veth pair, a user-space MACsec interface in each,
# UDP echo traffic over them while the configuration files are rewritten
# and re-read:
#   1. both sides install the next SAs (AN 1) without switching;
#   2. A switches its encoding SA to AN 1 and drops AN 0, B later does the same;
#      traffic keeps flowing in both directions (A still accepts B's AN 0);
#   3. each side retires the old receive SA once the peer's AN 1 frames arrive;
#   4. an unsafe reload (rekeying the encoding SA in place) is refused and
#      changes nothing;
# and the exit statistics show the per-SA counters of the new SAs, no frame
# rejected. Also checks that `--backend kernel` fails with a clear message
# where the kernel has no macsec driver. Root only; skips otherwise.
# Usage: bash tests/cli/macsec_rekey.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/macsec.sh"
netns_require macsec_rekey "network namespaces, TAP, AF_PACKET" ip openssl /usr/bin/python3
py=/usr/bin/python3

id=$$
nsa="lsrA$id"; nsb="lsrB$id"
va="lsrva$id"; vb="lsrvb$id"
ma="lsrma$id"; mb="lsrmb$id"
netns_init macsec_rekey
netns_add "$nsa" "$nsb"
netns_veth "$nsa" "$va" 02:00:00:79:00:01 "$nsb" "$vb" 02:00:00:79:00:02

umask 077
for k in a0 b0 a1 b1 x; do openssl rand -hex 16 >"$work/$k.key"; done
chmod 0600 "$work"/*.key
sci_a=0200007900010001
sci_b=0200007900020001

# write_config FILE ENCODING_AN "TX_SAS" PEER_SCI "RX_SAS"; SA lists as "an:key an:key";
# "an:key:new" marks an SA whose key has never been used ("new_key": true), as
# a reload that brings a key without PN state needs (docs/macsec_link.md).
write_config() {
  local sas_json
  sa_list() {
    local out="" first=1
    for e in $1; do
      [[ $first == 1 ]] || out+=", "
      first=0
      local an="${e%%:*}" rest="${e#*:}" new=""
      [[ "$rest" == *:new ]] && { new=', "new_key": true'; rest="${rest%:new}"; }
      out+="{ \"an\": $an, \"pn\": 1, \"key_file\": \"$rest.key\"$new }"
    done
    echo "$out"
  }
  cat >"$1.tmp" <<JSON
{
  "cipher_suite": "GCM-AES-128",
  "replay_window": 0,
  "rx_retire_delay_ms": 200,
  "rx_retire_timeout_ms": 0,
  "tx": { "encoding_an": $2, "sas": [ $(sa_list "$3") ] },
  "rx": [ { "sci": "$4", "sas": [ $(sa_list "$5") ] } ]
}
JSON
  mv "$1.tmp" "$1"  # the daemon re-reads it only on SIGHUP; never half-written
}
write_config "$work/a.json" 0 "0:a0" "$sci_b" "0:b0"
write_config "$work/b.json" 0 "0:b0" "$sci_a" "0:a0"

# wait_line FILE PATTERN: waits (up to 10 s) until a line of FILE matches.
wait_line() {
  for _ in $(seq 200); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "no line matching '$2' in $1: $(cat "$1")"
}
count_lines() { grep -c -- "$2" "$1" 2>/dev/null || true; }

start_link "$nsa" "$va" "$ma" "$work/a.json" a --new-key; pid_a=$last_pid
start_link "$nsb" "$vb" "$mb" "$work/b.json" b --new-key; pid_b=$last_pid
ip -n "$nsa" addr add 10.79.0.1/24 dev "$ma"
ip -n "$nsb" addr add 10.79.0.2/24 dev "$mb"

ip netns exec "$nsb" "$py" -c 'import socket
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("10.79.0.2",7000)); s.settimeout(60)
try:
    while True:
        d,a=s.recvfrom(65535); s.sendto(d,a)
except socket.timeout:
    pass' &
pids+=($!)
sleep 0.3
# echo N: sends N datagrams one at a time and fails unless every one comes back.
echo_round() {
  ip netns exec "$nsa" "$py" - "$1" <<'PY' || fail "UDP echo over MACsec failed ($2)"
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2.0)
for i in range(int(sys.argv[1])):
    msg = b"rekey %d" % i
    for attempt in range(3):          # the first one may wait for ARP
        s.sendto(msg, ("10.79.0.2", 7000))
        try:
            d, _ = s.recvfrom(65535)
            if d == msg:
                break
        except socket.timeout:
            continue
    else:
        sys.exit(1)
PY
}
echo_round 5 "before any switch"
echo "ok: UDP over MACsec with AN 0"

# 1. install AN 1 everywhere, keep transmitting on AN 0.
write_config "$work/a.json" 0 "0:a0 1:a1:new" "$sci_b" "0:b0 1:b1:new"
write_config "$work/b.json" 0 "0:b0 1:b1:new" "$sci_a" "0:a0 1:a1:new"
kill -HUP "$pid_a"; kill -HUP "$pid_b"
wait_line "$work/a.out" '"event":"reload"'
wait_line "$work/b.out" '"event":"reload"'
grep '"event":"reload"' "$work/a.out" | grep -q 'tx_sa_installed' || fail "A did not install tx AN 1"
grep '"event":"reload"' "$work/a.out" | grep -q 'rx_sa_installed' || fail "A did not install rx AN 1"
echo_round 5 "after installing AN 1"
echo "ok: next SAs installed on both sides, traffic unchanged"

# 2. A switches to AN 1 and drops AN 0; B still sends on AN 0.
write_config "$work/a.json" 1 "1:a1" "$sci_b" "1:b1"
kill -HUP "$pid_a"
for _ in $(seq 200); do [[ $(count_lines "$work/a.out" '"event":"reload"') -ge 2 ]] && break; sleep 0.05; done
grep '"event":"reload"' "$work/a.out" | tail -n1 | grep -q 'encoding_sa_switched' || fail "A did not switch"
grep '"event":"reload"' "$work/a.out" | tail -n1 | grep -q 'rx_sa_retire_scheduled' || fail "A did not schedule AN 0 retirement"
echo_round 10 "A on AN 1, B on AN 0"
sleep 0.5
if grep -q '"event":"sa_retired"' "$work/a.out"; then fail "A retired B's AN 0 before B switched"; fi
echo "ok: A transmits on AN 1 and still accepts B's AN 0"

# B follows.
write_config "$work/b.json" 1 "1:b1" "$sci_a" "1:a1"
kill -HUP "$pid_b"
for _ in $(seq 200); do [[ $(count_lines "$work/b.out" '"event":"reload"') -ge 2 ]] && break; sleep 0.05; done
echo_round 10 "both on AN 1"
wait_line "$work/a.out" '"event":"sa_retired"'
wait_line "$work/b.out" '"event":"sa_retired"'
echo "ok: both sides on AN 1, old receive SAs retired after the peer's AN 1 frames"

# 4. an unsafe reload is refused and changes nothing.
write_config "$work/a.json" 1 "1:x" "$sci_b" "1:b1"
kill -HUP "$pid_a"
wait_line "$work/a.out" '"event":"reload_refused"'
grep '"event":"reload_refused"' "$work/a.out" | grep -q '/tx/sas/0/key_file' || fail "refusal does not name the SA"
echo_round 5 "after a refused reload"
echo "ok: rekeying the encoding SA in place refused; traffic unchanged"

kill -TERM "$pid_a"; wait "$pid_a" || fail "A exited with an error"
kill -TERM "$pid_b"; wait "$pid_b" || fail "B exited with an error"
# The exit report is the pretty-printed JSON object after the last event line.
"$py" - "$work/a.out" <<'PY' || fail "exit statistics of A are wrong"
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index('{\n'):])
rx = j["rx_scs"]
assert len(rx) == 1 and rx[0]["sci"] == "0200007900020001", rx
assert [sa["an"] for sa in rx[0]["sas"]] == [1], rx           # AN 0 retired
assert rx[0]["sas"][0]["InPktsOK"] > 0, rx
assert rx[0]["InPktsOK"] == j["secy"]["InPktsOK"], (rx, j["secy"])
assert j["secy"]["InPktsNotValid"] == 0 and j["secy"]["InPktsNotUsingSA"] == 0, j["secy"]
assert j["secy"]["InPktsLate"] == 0, j["secy"]
tx = j["tx_sc"]
assert [sa["an"] for sa in tx["sas"]] == [1] and tx["sas"][0]["encoding"], tx
assert tx["sas"][0]["OutPktsEncrypted"] > 0 and tx["OutPktsEncrypted"] > tx["sas"][0]["OutPktsEncrypted"], tx
assert j["tx_sa"]["encoding_an"] == 1, j["tx_sa"]
c = j["control"]
assert c["reloads"] == 2 and c["reloads_refused"] == 1 and c["rx_sas_retired"] == 1, c
PY
echo "ok: exit statistics per SC/SA (AN 0 retired, AN 1 carrying traffic, nothing rejected)"

# The kernel back end fails clearly where the kernel has no macsec driver.
write_config "$work/k.json" 0 "0:a0" "$sci_b" "0:b0"
ip netns exec "$nsa" "$layersec" macsec up --backend kernel --link "$va" --name "lsrk$id" \
  --config "$work/k.json" --new-key >"$work/kernel.out" 2>&1 </dev/null &
kpid=$!
pids+=("$kpid")
# Wait for either outcome (an ASan build can take seconds to get there): the device comes up,
# or the process exits with the driver error.
for _ in $(seq 1 600); do
  grep -q "^macsec up (kernel):" "$work/kernel.out" 2>/dev/null && break
  kill -0 "$kpid" 2>/dev/null || break
  sleep 0.1
done
if grep -q "^macsec up (kernel):" "$work/kernel.out" && kill -0 "$kpid" 2>/dev/null; then
  echo "note: this kernel has a macsec driver; --backend kernel came up"
  kill -TERM "$kpid"; wait "$kpid" || fail "kernel back end exited with an error"
elif kill -0 "$kpid" 2>/dev/null; then
  fail "--backend kernel neither came up nor exited in 60 s: $(cat "$work/kernel.out")"
else
  if wait "$kpid"; then fail "--backend kernel exited 0 without a driver"; fi
  grep -q "Unknown device type" "$work/kernel.out" || fail "unclear kernel back end error: $(cat "$work/kernel.out")"
  ip -n "$nsa" link show "lsrk$id" >/dev/null 2>&1 && fail "kernel back end left a device behind"
  echo "ok: --backend kernel: $(grep -m1 "kernel back end" "$work/kernel.out")"
fi
echo "PASS"
