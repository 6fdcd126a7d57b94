#!/usr/bin/env bash
# `layersec macsec up --mka` between two network namespaces on a veth pair
# (IEEE 802.1X-2020 MKA with a pre-shared CAK, GCM-AES-128):
#   1. fail closed: until MKA installs a SAK nothing from A reaches the wire
#      except MACsec and EAPOL (a sniffer on B's veth checks every frame);
#   2. both sides report the same SAK fingerprint (A, priority 10, is key
#      server), UDP both ways through the TAPs;
#   3. 2,000 UDP datagrams/s flow for 4 s while the key server rekeys every 1.5 s
#      (timers.rekey_interval_ms): at least two rekeys on both sides and no
#      datagram lost, with a SIGHUP to the key server among them (a rekey
#      with reason "operator"); SIGHUP to B, not the key server, is refused
#      and names the key server;
#   4. kill -9 of B and a restart: a new SAK, traffic resumes, and B's
#      frames recorded on the wire before the kill, replayed into A, are
#      rejected (nothing delivered, A's SecY counts them);
#   5. a peer with another CAK never becomes live (A counts bad_icv drops)
#      and carries nothing.
# Root only; skips (77) otherwise. Usage: bash tests/cli/mka_link_netns.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/lib/netns.sh"
source "$here/lib/macsec.sh"
source "$here/lib/mka.sh"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: mka_link_netns needs root (namespaces, TAP, AF_PACKET)"; exit 77; fi
for t in ip openssl /usr/bin/python3; do
  command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t is not installed"; exit 77; }
done
py=/usr/bin/python3

id=$$
nsa="mkaA$id"; nsb="mkaB$id"
va="mkva$id"; vb="mkvb$id"
ma="mkma$id"; mb="mkmb$id"
netns_init mka_link
netns_add "$nsa" "$nsb"
netns_veth "$nsa" "$va" 02:00:00:18:00:01 "$nsb" "$vb" 02:00:00:18:00:02

mka_key "$work/cak.key"
mka_key "$work/other.key"
ckn=6c61796572736563206d6b612074657374
rekey='"timers": {"rekey_interval_ms": 1500}'
mka_config "$work/a.json" cak.key "$ckn" 10 gcm-aes-128 "$rekey"
mka_config "$work/b.json" cak.key "$ckn" 20 gcm-aes-128 "$rekey"
mka_config "$work/x.json" other.key "$ckn" 20 gcm-aes-128

# 1. Every frame A puts on the wire, from its first one: EtherType 88e5 or 888e only.
ip netns exec "$nsb" "$py" - "$vb" "$work/sniff.txt" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
seen = {}
end = time.time() + 4
while time.time() < end:
    try:
        f = s.recv(65535)
    except socket.timeout:
        continue
    if f[6:12] == bytes.fromhex("020000180001"):
        t = f[12:14].hex()
        seen[t] = seen.get(t, 0) + 1
open(sys.argv[2], "w").write(" ".join("%s:%d" % kv for kv in sorted(seen.items())) + "\n")
PY
sniffer=$!
pids+=("$sniffer")
sleep 0.3

start_mka "$nsa" "$va" "$ma" "$work/a.json" a --stats-interval 0.5; pid_a=$last_pid
ip -n "$nsa" addr add 10.18.0.1/24 dev "$ma"
# A alone: its kernel sends ARP/IP at the TAP before any SAK exists.
ip netns exec "$nsa" /usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); [s.sendto(b"early",("10.18.0.2",9)) for _ in range(3)]'
start_mka "$nsb" "$vb" "$mb" "$work/b.json" b --stats-interval 0.5; pid_b=$last_pid
ip -n "$nsb" addr add 10.18.0.2/24 dev "$mb"

# 2. The same SAK on both sides.
wait_events "$work/a.out" mka_sak_transmitting 1 10
wait_events "$work/b.out" mka_sak_transmitting 1 10
fa="$(first_field "$work/a.out" mka_sak_transmitting sak_fingerprint)"
fb="$(first_field "$work/b.out" mka_sak_transmitting sak_fingerprint)"
[[ -n "$fa" && "$fa" == "$fb" ]] || fail "SAK fingerprints differ: A $fa, B $fb"
[[ "$(first_field "$work/b.out" mka_sak_installed sak_fingerprint)" == "$fa" ]] || fail "B installed another SAK first"
[[ "$(last_field "$work/a.out" mka_key_server_elected sci)" == 0200001800010001 ]] || fail "A is not the key server"
[[ "$(last_field "$work/b.out" mka_key_server_elected sci)" == 0200001800010001 ]] || fail "B did not elect A"
grep -q '"sak_fingerprint"' "$work/a.out" || fail "no fingerprint in A's SAK lines"
if grep -qi "$(tr -d '\n' <"$work/cak.key")" "$work"/*.out "$work"/*.err; then fail "the CAK appears in the output"; fi
echo "ok: same SAK both sides ($fa, KN $(first_field "$work/a.out" mka_sak_transmitting kn))"

reach "$nsa" "$nsb" 10.18.0.2 || fail "UDP over MKA-keyed MACsec failed"
echo "ok: UDP echo through the TAPs"
wait "$sniffer" || true
sniffed="$(cat "$work/sniff.txt")"
for kv in $sniffed; do
  case "${kv%%:*}" in 88e5|888e) ;; *) fail "A sent EtherType ${kv%%:*} in clear (sniffed: $sniffed)";; esac
done
[[ "$sniffed" == *888e* ]] || fail "no MKPDU from A seen on the wire ($sniffed)"
echo "ok: fail closed: A's frames on the wire were only $sniffed"

# 3. Rekeys under load, nothing lost.
ip netns exec "$nsb" "$py" - 10.18.0.2 7100 "$work/rx.txt" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind((sys.argv[1], int(sys.argv[2])))
s.settimeout(1.5)
got = set()
try:
    while True:
        d, _ = s.recvfrom(2048)
        if d.startswith(b"seq "):
            got.add(int(d.split()[1]))
except socket.timeout:
    pass
open(sys.argv[3], "w").write("%d %d\n" % (len(got), max(got) + 1 if got else 0))
PY
receiver=$!
pids+=("$receiver")
sleep 0.3
before="$(count_events "$work/a.out" mka_sak_transmitting)"
before_b="$(count_events "$work/b.out" mka_sak_transmitting)"
ip netns exec "$nsa" "$py" - 10.18.0.2 7100 8000 2000 <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n, rate = int(sys.argv[3]), float(sys.argv[4])
t0 = time.monotonic()
for i in range(n):
    while time.monotonic() < t0 + i / rate:
        pass
    s.sendto(b"seq %d " % i + b"x" * 100, (sys.argv[1], int(sys.argv[2])))
PY
kill -HUP "$pid_a"  # during the flow: the operator's rekey must lose nothing either
wait "$receiver" || true
read -r got sent_max <"$work/rx.txt"
after="$(count_events "$work/a.out" mka_sak_transmitting)"
after_b="$(count_events "$work/b.out" mka_sak_transmitting)"
[[ $((after - before)) -ge 2 && $((after_b - before_b)) -ge 2 ]] ||
  fail "fewer than two rekeys during the flow (A $((after - before)), B $((after_b - before_b)))"
[[ "$got" == 8000 ]] || fail "lost $((8000 - got)) of 8000 datagrams across $((after - before)) rekeys"
# SIGHUP on the key server asks for a new SAK (reason "operator"); on B,
# which is not the key server, it is refused and names the key server.
wait_events "$work/a.out" rekey_requested 1 3
for _ in $(seq 100); do
  grep -q '"event":"mka_sak_generated".*"reason":"operator"' "$work/a.out" && break
  sleep 0.05
done
grep -q '"event":"mka_sak_generated".*"reason":"operator"' "$work/a.out" ||
  fail "SIGHUP on the key server generated no SAK with reason operator"
kill -HUP "$pid_b"
wait_events "$work/b.out" rekey_refused 1 3
[[ "$(last_field "$work/b.out" rekey_refused error)" == *"the key server is 0200001800010001"* ]] ||
  fail "B's refusal does not name the key server: $(last_field "$work/b.out" rekey_refused error)"
echo "ok: 8000 datagrams at 2000/s across $((after - before)) rekeys, none lost; SIGHUP rekeys on the key server, refused elsewhere"

# 4. Record B's MACsec frames on A's wire, kill -9 B, restart it.
ip netns exec "$nsa" "$py" - "$va" "$work/recorded.bin" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88E5))
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
frames = []
end = time.time() + 1.5
while time.time() < end and len(frames) < 50:
    try:
        f = s.recv(65535)
    except socket.timeout:
        continue
    if f[6:12] == bytes.fromhex("020000180002"):
        frames.append(f)
with open(sys.argv[2], "wb") as out:
    for f in frames:
        out.write(len(f).to_bytes(2, "big") + f)
PY
recorder=$!
pids+=("$recorder")
sleep 0.2
ip netns exec "$nsb" "$py" -c 'import socket,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
for i in range(40):
    s.sendto(b"pre-kill %d" % i, ("10.18.0.1", 7200)); time.sleep(0.02)'
wait "$recorder" || true
nrec="$("$py" -c 'import sys
d=open(sys.argv[1],"rb").read(); i=n=0
while i<len(d): i+=2+int.from_bytes(d[i:i+2],"big"); n+=1
print(n)' "$work/recorded.bin")"
[[ "$nrec" -ge 10 ]] || fail "recorded only $nrec MACsec frames of B"
old_fp="$(last_field "$work/b.out" mka_sak_transmitting sak_fingerprint)"
kill -9 "$pid_b"
wait "$pid_b" 2>/dev/null || true
start_mka "$nsb" "$vb" "$mb" "$work/b.json" b2 --stats-interval 0.5; pid_b=$last_pid
ip -n "$nsb" addr add 10.18.0.2/24 dev "$mb"
wait_events "$work/b2.out" mka_sak_transmitting 1 10
new_fp="$(first_field "$work/b2.out" mka_sak_transmitting sak_fingerprint)"
[[ "$new_fp" != "$old_fp" ]] || fail "the restarted member got the old SAK back ($new_fp)"
grep -q "\"sak_fingerprint\":\"$new_fp\"" <<<"$(events "$work/a.out" mka_sak_transmitting)" ||
  fail "A never transmitted with B's new SAK $new_fp"
reach "$nsb" "$nsa" 10.18.0.1 || fail "no traffic after the restart"
echo "ok: kill -9 and restart: new SAK $new_fp (was $old_fp), traffic resumes"

# Replay the recorded frames into A: none may be delivered.
sleep 1
ip netns exec "$nsa" "$py" - 10.18.0.1 7200 "$work/replay_rx.txt" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
s.settimeout(1.5)
n = 0
try:
    while True:
        d, _ = s.recvfrom(2048)
        n += 1
except socket.timeout:
    pass
open(sys.argv[3], "w").write("%d\n" % n)
PY
replay_rx=$!
pids+=("$replay_rx")
sleep 0.6
dropped_before="$(last_stats "$work/a.out" link.rx_dropped)"
ip netns exec "$nsb" "$py" - "$vb" "$work/recorded.bin" <<'PY'
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
d = open(sys.argv[2], "rb").read()
i = 0
while i < len(d):
    n = int.from_bytes(d[i:i + 2], "big")
    s.send(d[i + 2:i + 2 + n])
    i += 2 + n
PY
wait "$replay_rx" || true
[[ "$(cat "$work/replay_rx.txt")" == 0 ]] || fail "A delivered $(cat "$work/replay_rx.txt") replayed datagrams"
sleep 0.6
dropped_after="$(last_stats "$work/a.out" link.rx_dropped)"
[[ $((dropped_after - dropped_before)) -ge "$nrec" ]] ||
  fail "A's SecY dropped $((dropped_after - dropped_before)) of $nrec replayed frames"
echo "ok: $nrec frames recorded before the kill, replayed after the restart: all rejected"

# 5. A peer with another CAK.
kill -TERM "$pid_b"; wait "$pid_b" || fail "B did not exit cleanly"
bad_before="$(last_stats "$work/a.out" mka.drops.bad_icv)"
start_mka "$nsb" "$vb" "$mb" "$work/x.json" x --stats-interval 0.5; pid_x=$last_pid
ip -n "$nsb" addr add 10.18.0.2/24 dev "$mb"
sleep 2.5
if reach "$nsb" "$nsa" 10.18.0.1 1; then fail "UDP got through with a wrong CAK"; fi
[[ "$(count_events "$work/x.out" mka_peer_live)" == 0 ]] || fail "the wrong-CAK peer saw a live peer"
[[ "$(count_events "$work/x.out" mka_sak_installed)" == 0 ]] || fail "the wrong-CAK peer installed a SAK"
bad_after="$(last_stats "$work/a.out" mka.drops.bad_icv)"
[[ $((bad_after - bad_before)) -ge 2 ]] || fail "A counted $((bad_after - bad_before)) bad ICVs from the wrong-CAK peer"
[[ "$(last_stats "$work/x.out" link.tx_sent)" == 0 ]] || fail "the wrong-CAK peer sent MACsec frames"
echo "ok: wrong CAK: never live, $((bad_after - bad_before)) MKPDUs dropped as bad_icv, nothing carried"
kill -TERM "$pid_x"; wait "$pid_x" || fail "X did not exit cleanly"
kill -TERM "$pid_a"; wait "$pid_a" || fail "A did not exit cleanly"
echo "PASS: mka_link_netns"
