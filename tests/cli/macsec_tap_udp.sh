#!/usr/bin/env bash
# End-to-end test of the user-space MACsec interface (`layersec macsec up`):
# two network namespaces joined by a veth pair, a MACsec TAP interface in
# each on top of its veth end, IPv4 only on the MACsec interfaces. Checks
#   - UDP echo round trips (ARP through MACsec too), a UDP message and a
#     2-second iperf3 run over the MACsec interfaces;
#   - a capture on the veth holds only EtherType 0x88E5 frames (no ARP/IPv4
#     in clear) and never the payload marker string;
#   - a peer with a wrong key gets nothing delivered and counts InPktsNotValid;
#   - clear frames on the veth are dropped and counted (no clear fallback);
# and prints the iperf3 throughput with MACsec beside the plain veth measured
# in the same run. Root only (namespaces, TAP, AF_PACKET): skips otherwise.
# Usage: bash tests/cli/macsec_tap_udp.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/macsec.sh"
netns_require macsec_tap_udp "network namespaces, TAP, AF_PACKET" ip iperf3 dumpcap tshark openssl /usr/bin/python3
py=/usr/bin/python3

id=$$
nsa="lsmA$id"; nsb="lsmB$id"
va="lsva$id"; vb="lsvb$id"
ma="lsma$id"; mb="lsmb$id"
netns_init macsec_tap_udp
netns_add "$nsa" "$nsb"
netns_veth "$nsa" "$va" 02:00:00:78:00:01 "$nsb" "$vb" 02:00:00:78:00:02

# Keys (mode 0600) and configurations. SCIs are the veth MACs || port 1.
umask 077
openssl rand -hex 16 >"$work/a.key"
openssl rand -hex 16 >"$work/b.key"
openssl rand -hex 16 >"$work/wrong.key"
chmod 0600 "$work"/*.key
sci_a=0200007800010001
sci_b=0200007800020001
write_config() {  # file tx_key rx_key peer_sci pn_state_file
  cat >"$1" <<JSON
{
  "cipher_suite": "GCM-AES-128",
  "pn_state_file": "$5",
  "port": 1,
  "validate_frames": "strict",
  "replay_protect": true,
  "replay_window": 0,
  "tx": { "encoding_an": 0, "sas": [ { "an": 0, "pn": 1, "key_file": "$2" } ] },
  "rx": [ { "sci": "$4", "sas": [ { "an": 0, "pn": 1, "key_file": "$3" } ] } ]
}
JSON
}
# B and its wrong-key restart share one PN state file: b.key resumes after
# its PNs, and only wrong.key is new.
write_config "$work/a.json" a.key b.key "$sci_b" a.pn-state
write_config "$work/b.json" b.key a.key "$sci_a" b.pn-state
write_config "$work/bad.json" b.key wrong.key "$sci_a" b.pn-state

# A group-readable key file is refused, naming the JSON path.
cp "$work/a.key" "$work/loose.key"; chmod 0644 "$work/loose.key"
write_config "$work/loose.json" loose.key b.key "$sci_b" loose.pn-state
if ip netns exec "$nsa" "$layersec" macsec up --link "$va" --name "$ma" --config "$work/loose.json" \
  >"$work/loose.out" 2>&1; then
  fail "a key file with mode 0644 was accepted"
fi
grep -q "/tx/sas/0/key_file" "$work/loose.out" || fail "key file error does not name the JSON path: $(cat "$work/loose.out")"
echo "ok: key file with mode 0644 refused: $(head -n1 "$work/loose.out")"



# UDP round trips (no ping binary here): an echo server and a client that
# sends N datagrams and prints how many replies came back.
echo_py='import socket,sys
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
s.bind((sys.argv[1],int(sys.argv[2])))
s.settimeout(float(sys.argv[3]))
try:
    while True:
        d,a=s.recvfrom(65535); s.sendto(d,a)
except socket.timeout:
    pass'
rtt_py='import socket,sys
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
s.settimeout(1.0)
n=0
for i in range(int(sys.argv[3])):
    s.sendto(b"echo %d" % i,(sys.argv[1],int(sys.argv[2])))
    try:
        d,a=s.recvfrom(65535); n+= d==b"echo %d" % i
    except socket.timeout:
        pass
print(n)'
udp_echo() {  # client_ns server_ns server_ip count -> prints replies
  ip netns exec "$2" "$py" -c "$echo_py" "$3" 7777 3 &
  local srv=$!
  sleep 0.3
  ip netns exec "$1" "$py" -c "$rtt_py" "$3" 7777 "$4"
  wait "$srv" || true
}

start_link "$nsa" "$va" "$ma" "$work/a.json" a --new-key; pid_a=$last_pid
start_link "$nsb" "$vb" "$mb" "$work/b.json" b --new-key; pid_b=$last_pid
ip -n "$nsa" addr add 10.79.0.1/24 dev "$ma"
ip -n "$nsb" addr add 10.79.0.2/24 dev "$mb"
mtu_a="$(ip -n "$nsa" -o link show "$ma" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')"
[[ "$mtu_a" == 1468 ]] || fail "MACsec interface MTU is $mtu_a, expected 1500 - 32 = 1468"
ip -n "$nsa" -o link show "$ma" | grep -q "02:00:00:78:00:01" || fail "MAC not copied from the lower interface"
echo "ok: $ma up with MTU $mtu_a and the lower interface's MAC"

# Capture everything on A's veth end while traffic runs.
ip netns exec "$nsa" dumpcap -q -P -i "$va" -w "$work/veth.pcap" >"$work/dumpcap.out" 2>&1 &
cap_pid=$!
pids+=("$cap_pid")
for _ in $(seq 100); do [[ -s "$work/veth.pcap" ]] && break; sleep 0.05; done
sleep 0.5

replies="$(udp_echo "$nsa" "$nsb" 10.79.0.2 3)"
[[ "$replies" == 3 ]] || fail "UDP echo over MACsec: $replies of 3 replies"
echo "ok: UDP echo over MACsec (ARP resolved through it too): 3 of 3 replies"

marker="LAYERSEC-MACSEC-MARKER-$id-$(openssl rand -hex 6)"
recv_py='import socket,sys
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
s.bind((sys.argv[1],int(sys.argv[2])))
s.settimeout(float(sys.argv[3]))
try:
    d,a=s.recvfrom(65535)
    open(sys.argv[4],"wb").write(d)
except socket.timeout:
    pass'
send_py='import socket,sys,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
for i in range(3):
    s.sendto(sys.argv[3].encode()*4,(sys.argv[1],int(sys.argv[2]))); time.sleep(0.1)'
ip netns exec "$nsb" "$py" -c "$recv_py" 10.79.0.2 5555 5 "$work/udp.rx" &
rx_pid=$!
sleep 0.3
ip netns exec "$nsa" "$py" -c "$send_py" 10.79.0.2 5555 "$marker"
wait "$rx_pid" || true
grep -q "$marker" "$work/udp.rx" 2>/dev/null || fail "UDP message did not arrive over MACsec"
echo "ok: UDP message with marker delivered over MACsec"

ip netns exec "$nsb" iperf3 -s -1 -B 10.79.0.2 >"$work/iperf_s.out" 2>&1 &
srv=$!
sleep 0.5
ip netns exec "$nsa" iperf3 -c 10.79.0.2 -t 2 -J >"$work/iperf_macsec.json" || fail "iperf3 over MACsec failed"
wait "$srv" || true
mbit_macsec="$("$py" -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/1e6))' "$work/iperf_macsec.json")"
echo "ok: iperf3 (TCP, 2 s) over the MACsec interfaces: $mbit_macsec Mbit/s"

# iperf3 UDP at an offered 300 Mbit/s: received rate and loss.
iperf_udp() {  # client_ns server_ns server_ip out.json
  ip netns exec "$2" iperf3 -s -1 -B "$3" >/dev/null 2>&1 &
  local srv=$!
  sleep 0.5
  ip netns exec "$1" iperf3 -c "$3" -u -b 300M -l 1400 -t 2 -J >"$4" || fail "iperf3 UDP to $3 failed"
  wait "$srv" || true
  "$py" -c 'import json,sys
s=json.load(open(sys.argv[1]))["end"]["sum"]
print("%.1f Mbit/s received, %.2f%% lost" % (s["bits_per_second"]*(1-s["lost_percent"]/100)/1e6, s["lost_percent"]))' "$4"
}
udp_macsec="$(iperf_udp "$nsa" "$nsb" 10.79.0.2 "$work/iperf_udp_macsec.json")"
echo "ok: iperf3 (UDP, 300 Mbit/s offered, 1400-byte datagrams, 2 s) over MACsec: $udp_macsec"

sleep 0.3
kill -INT "$cap_pid"; wait "$cap_pid" || true
frames="$(tshark -r "$work/veth.pcap" -T fields -e eth.type 2>/dev/null | wc -l)"
others="$(tshark -r "$work/veth.pcap" -T fields -e eth.type 2>/dev/null | grep -v -c '^0x88e5$' || true)"
[[ "$frames" -gt 10 ]] || fail "capture holds only $frames frames"
[[ "$others" == 0 ]] || fail "capture holds $others frames that are not EtherType 0x88E5: $(tshark -r "$work/veth.pcap" -T fields -e eth.type | sort | uniq -c)"
clear="$(tshark -r "$work/veth.pcap" -Y 'arp || ip || ipv6' 2>/dev/null | wc -l)"
[[ "$clear" == 0 ]] || fail "tshark decodes $clear ARP/IP frames in clear on the veth"
if grep -a -q "$marker" "$work/veth.pcap"; then fail "payload marker appears in clear in the veth capture"; fi
echo "ok: veth capture: $frames frames, all EtherType 0x88E5, no ARP/IP in clear, marker absent"

stop_link "$pid_b"
ok_b="$(stat_of "$work/b.out" secy.InPktsOK)"
[[ "$ok_b" -gt 0 ]] || fail "peer B counted no InPktsOK"
echo "ok: peer B stats: InPktsOK $ok_b, delivered $(stat_of "$work/b.out" link.rx_delivered)"

# Negative: B comes back with the wrong receive key for A's SC.
start_link "$nsb" "$vb" "$mb" "$work/bad.json" bad --new-key; pid_bad=$last_pid
ip -n "$nsb" addr add 10.79.0.2/24 dev "$mb"
rm -f "$work/udp.rx"
ip netns exec "$nsb" "$py" -c "$recv_py" 10.79.0.2 5555 2 "$work/udp.rx" &
rx_pid=$!
sleep 0.3
ip netns exec "$nsa" "$py" -c "$send_py" 10.79.0.2 5555 "$marker"
wait "$rx_pid" || true
[[ ! -s "$work/udp.rx" ]] || fail "UDP message delivered to a peer with the wrong key"
replies="$(udp_echo "$nsa" "$nsb" 10.79.0.2 2)"
[[ "$replies" == 0 ]] || fail "UDP echo answered by a peer with the wrong key"

# Clear frames on the veth (addresses put on the veth itself while the links
# run, UDP across it): the lower links carry nothing but MACsec
# (docs/macsec_link.md, "lower link"), so no echo comes back; the links
# still see and count the clear frames (AF_PACKET taps them before the
# ingress filter).
ip -n "$nsa" addr add 10.80.0.1/24 dev "$va"
ip -n "$nsb" addr add 10.80.0.2/24 dev "$vb"
ip -n "$nsa" neigh replace 10.80.0.2 lladdr 02:00:00:78:00:02 dev "$va" nud permanent
replies="$(udp_echo "$nsa" "$nsb" 10.80.0.2 2)"
[[ "$replies" == 0 ]] || fail "plain UDP echo across the veth answered ($replies of 2) while the MACsec links run"
ip -n "$nsa" neigh del 10.80.0.2 dev "$va"
sleep 0.2

stop_link "$pid_bad"
notvalid="$(stat_of "$work/bad.out" secy.InPktsNotValid)"
delivered_bad="$(stat_of "$work/bad.out" link.rx_delivered)"
notmacsec_bad="$(stat_of "$work/bad.out" link.rx_not_macsec)"
[[ "$notvalid" -gt 0 ]] || fail "wrong-key peer counted no InPktsNotValid"
[[ "$delivered_bad" == 0 ]] || fail "wrong-key peer delivered $delivered_bad frames"
[[ "$notmacsec_bad" -gt 0 ]] || fail "clear frames on the veth were not counted as rx_not_macsec"
echo "ok: wrong-key peer: InPktsNotValid $notvalid, delivered 0; clear veth frames dropped: rx_not_macsec $notmacsec_bad, InPktsNoTag $(stat_of "$work/bad.out" secy.InPktsNoTag)"

stop_link "$pid_a"
echo "ok: peer A stats: OutPktsEncrypted $(stat_of "$work/a.out" secy.OutPktsEncrypted), InPktsOK $(stat_of "$work/a.out" secy.InPktsOK), rx_not_macsec $(stat_of "$work/a.out" link.rx_not_macsec)"

# Baseline: the same iperf3 run over the plain veth, same machine, same run.
ip netns exec "$nsb" iperf3 -s -1 -B 10.80.0.2 >"$work/iperf_s2.out" 2>&1 &
srv=$!
sleep 0.5
ip netns exec "$nsa" iperf3 -c 10.80.0.2 -t 2 -J >"$work/iperf_plain.json" || fail "iperf3 over the plain veth failed"
wait "$srv" || true
mbit_plain="$("$py" -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/1e6))' "$work/iperf_plain.json")"
udp_plain="$(iperf_udp "$nsa" "$nsb" 10.80.0.2 "$work/iperf_udp_plain.json")"
echo "throughput (iperf3 TCP, 2 s, this run): MACsec TAP $mbit_macsec Mbit/s, plain veth $mbit_plain Mbit/s" \
     "(for comparison, the TSN lab paper's figure on its ARM board with MACsec: 168-206 Mbit/s)"
echo "throughput (iperf3 UDP, 300 Mbit/s offered, 2 s, this run): MACsec TAP $udp_macsec; plain veth $udp_plain"
echo "PASS: macsec_tap_udp"
