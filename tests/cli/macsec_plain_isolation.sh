#!/usr/bin/env bash
# Plain traffic must not reach applications around the MACsec interface
# (issue 13 item 9). Two namespaces joined by a veth pair, `layersec macsec
# up` in each, IPv4 on the MACsec (TAP) interfaces only, IPv6 left enabled on
# the veths (the guard must turn it off). From B's veth end an attacker
# injects plain frames addressed to A (scapy, AF_PACKET, so B's own stack is
# bypassed):
#   - UDP to A's TAP address from A's peer address, from a spoofed address in
#     the subnet and from an outside address, to a socket bound to the TAP
#     address, to one bound to the TAP device (SO_BINDTODEVICE) and to one
#     bound to the wildcard address;
#   - ICMP echo requests to A's TAP address, ICMPv6 echo to ff02::1;
#   - ARP requests for A's TAP address.
# Checked with "lower_link": "unchanged" first (the attack of the issue must
# succeed there, or the test proves nothing), then with the default
# "isolate" and with "sysctl-only": no attack datagram reaches any socket,
# no answer comes back (captured on B's veth and on B's TAP), A counts the
# plain frames (rx_not_macsec), MACsec traffic still flows, the sysctls are
# restored at exit, and an address on the lower interface is refused.
# Root only; skips otherwise.
# Usage: bash tests/cli/macsec_plain_isolation.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/macsec.sh"
netns_require macsec_plain_isolation "network namespaces, TAP, AF_PACKET, nftables" ip dumpcap openssl /usr/bin/python3
py=/usr/bin/python3
"$py" -c 'import scapy.all' 2>/dev/null || { echo "SKIP: scapy is not installed for $py"; exit 0; }

id=$$
nsa="lsiA$id"; nsb="lsiB$id"
va="lsiva$id"; vb="lsivb$id"
ma="lsima$id"; mb="lsimb$id"
mac_a=02:00:00:79:00:01; mac_b=02:00:00:79:00:02
ip_a=10.81.0.1; ip_b=10.81.0.2
netns_init macsec_plain_isolation
NETNS_IPV6=1 netns_add "$nsa" "$nsb"
netns_veth "$nsa" "$va" "$mac_a" "$nsb" "$vb" "$mac_b"

openssl rand -hex 16 >"$work/a.key"
openssl rand -hex 16 >"$work/b.key"
chmod 0600 "$work"/*.key
write_config() {  # file tx_key rx_key peer_sci lower_link pn_state_file
  cat >"$1" <<JSON
{ "cipher_suite": "GCM-AES-128", "lower_link": "$5", "pn_state_file": "$6",
  "tx": { "sas": [ { "an": 0, "key_file": "$2" } ] },
  "rx": [ { "sci": "$4", "sas": [ { "an": 0, "key_file": "$3" } ] } ] }
JSON
}
sci_a=0200007900010001; sci_b=0200007900020001
write_config "$work/b.json" b.key a.key "$sci_a" isolate b.pn-state

sysctl_a() { ip netns exec "$nsa" cat "/proc/sys/net/$1"; }
# IPv4 packets that reached A's IP layer (Ip: InReceives, all interfaces).
ip_in_a() { ip netns exec "$nsa" awk '/^Ip: [0-9]/ {print $4}' /proc/net/snmp; }

# Receivers on A: three sockets (TAP address, TAP device, wildcard). Each
# counts datagrams whose payload starts with ATTACK and exits when a datagram
# "END" arrives (sent by B over MACsec after the attack), printing
# "<port> <attack datagrams> <legitimate datagrams>".
recv_py='import socket,sys
mode,port,dev=sys.argv[1],int(sys.argv[2]),sys.argv[3]
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
if mode=="dev":
    s.setsockopt(socket.SOL_SOCKET,socket.SO_BINDTODEVICE,dev.encode())
    s.bind(("0.0.0.0",port))
elif mode=="addr":
    s.bind((sys.argv[4],port))
else:
    s.bind(("0.0.0.0",port))
s.settimeout(60)
attack=legit=0
while True:
    d,a=s.recvfrom(65535)
    if d.startswith(b"ATTACK"): attack+=1
    elif d==b"END": break
    else: legit+=1
print(port,attack,legit)'

# The attack, from B's namespace on B's veth end.
attack_py='import sys,time
from scapy.all import Ether,IP,UDP,ICMP,ARP,IPv6,ICMPv6EchoRequest,Raw,sendp,conf
conf.verb=0
iface,mac_a,mac_b,ip_a,ip_b=sys.argv[1:6]
n=int(sys.argv[6])
frames=[]
for src in (ip_b,"10.81.0.77","192.0.2.5"):
    for port in (9001,9002,9003):
        for i in range(n):
            frames.append(Ether(dst=mac_a,src=mac_b)/IP(src=src,dst=ip_a)/UDP(sport=40000+i,dport=port)/Raw(b"ATTACK %d"%i))
for i in range(n):
    frames.append(Ether(dst=mac_a,src=mac_b)/IP(src=ip_b,dst=ip_a)/ICMP(type=8,id=0x4c53,seq=i)/Raw(b"ATTACK"))
    frames.append(Ether(dst="ff:ff:ff:ff:ff:ff",src=mac_b)/ARP(op=1,hwsrc=mac_b,psrc=ip_b,pdst=ip_a))
    frames.append(Ether(dst="33:33:00:00:00:01",src=mac_b)/IPv6(src="fe80::ff:fe79:2",dst="ff02::1")/ICMPv6EchoRequest(id=0x4c53,seq=i))
for f in frames:
    sendp(f,iface=iface)
print(len(frames))'

# Counts the answers to the attack in a classic pcap: ICMP echo replies from
# A's address, ICMPv6 echo replies from A's MAC and, on the veth ("veth"
# mode), ARP replies for A's address (on the TAP, ARP between the MACsec
# interfaces is legitimate and not counted).
answers_py='import struct,sys
path,ip_a,mac_a,mode=sys.argv[1],sys.argv[2],bytes.fromhex(sys.argv[3].replace(":","")),sys.argv[4]
ipa=bytes(int(x) for x in ip_a.split("."))
d=open(path,"rb").read()
if len(d)<24: print(0); sys.exit()
magic=struct.unpack("<I",d[:4])[0]
end="<" if magic in (0xa1b2c3d4,0xa1b23c4d) else ">"
link=struct.unpack(end+"I",d[20:24])[0]
off=24; n=0
while off+16<=len(d):
    _,_,incl,_=struct.unpack(end+"IIII",d[off:off+16]); off+=16
    f=d[off:off+incl]; off+=incl
    if link==1:
        et=f[12:14]; p=f[14:]; src_mac=f[6:12]
    else:
        continue
    if et==b"\x08\x06" and mode=="veth" and len(p)>=18 and p[6:8]==b"\x00\x02" and p[14:18]==ipa: n+=1
    elif et==b"\x08\x00" and len(p)>=21 and p[12:16]==ipa and p[9]==1 and p[20]==0: n+=1
    elif et==b"\x86\xdd" and src_mac==mac_a and len(p)>=41 and p[6]==58 and p[40]==129: n+=1
print(n)'

# One round: A with the given lower_link policy, the attack, then the
# counts. Prints "attack_datagrams answers_on_veth answers_on_tap".
round_with() {  # policy tag
  local policy="$1" tag="$2"
  # One PN state file for A across the rounds: B keeps running, so A must
  # resume its PNs (a fresh state would start at PN 1 and B would drop it).
  write_config "$work/a-$tag.json" a.key b.key "$sci_b" "$policy" a.pn-state
  start_link "$nsa" "$va" "$ma" "$work/a-$tag.json" "a-$tag" --new-key
  pid_a=$last_pid
  ip -n "$nsa" addr add "$ip_a/24" dev "$ma"
  # Receivers, then captures on B's veth (clear answers) and on B's TAP
  # (answers A routed through MACsec).
  local r1 r2 r3
  ip netns exec "$nsa" "$py" -c "$recv_py" addr 9001 - "$ip_a" >"$work/r1-$tag.out" & r1=$!
  ip netns exec "$nsa" "$py" -c "$recv_py" dev 9002 "$ma" >"$work/r2-$tag.out" & r2=$!
  ip netns exec "$nsa" "$py" -c "$recv_py" any 9003 - >"$work/r3-$tag.out" & r3=$!
  pids+=("$r1" "$r2" "$r3")
  ip netns exec "$nsb" dumpcap -q -P -i "$vb" -w "$work/veth-$tag.pcap" >/dev/null 2>&1 & local c1=$!
  ip netns exec "$nsb" dumpcap -q -P -i "$mb" -w "$work/tap-$tag.pcap" >/dev/null 2>&1 & local c2=$!
  pids+=("$c1" "$c2")
  for _ in $(seq 100); do [[ -s "$work/veth-$tag.pcap" && -s "$work/tap-$tag.pcap" ]] && break; sleep 0.05; done
  sleep 0.5
  # MACsec works before the attack: B reaches all three sockets legitimately.
  ip netns exec "$nsb" "$py" -c 'import socket,sys
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
for p in (9001,9002,9003): s.sendto(b"hello",(sys.argv[1],p))' "$ip_a"
  sleep 0.3
  local sent in_before
  in_before="$(ip_in_a)"
  sent="$(ip netns exec "$nsb" "$py" -c "$attack_py" "$vb" "$mac_a" "$mac_b" "$ip_a" "$ip_b" 20)"
  sleep 1
  ip netns exec "$nsb" "$py" -c 'import socket,sys,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
for i in range(3):
    for p in (9001,9002,9003): s.sendto(b"END",(sys.argv[1],p))
    time.sleep(0.2)' "$ip_a"
  wait "$r1" "$r2" "$r3" || fail "a receiver on A did not see the END datagram over MACsec ($tag)"
  last_ip_in=$(($(ip_in_a) - in_before))
  sleep 0.3
  kill -INT "$c1" "$c2"; wait "$c1" "$c2" || true
  stop_link "$pid_a"
  local attack=0 legit=0
  for f in "$work"/r[123]-"$tag".out; do
    read -r _ a l <"$f"
    attack=$((attack + a)); legit=$((legit + l))
  done
  local veth_answers tap_answers
  veth_answers="$("$py" -c "$answers_py" "$work/veth-$tag.pcap" "$ip_a" "$mac_a" veth)"
  tap_answers="$("$py" -c "$answers_py" "$work/tap-$tag.pcap" "$ip_a" "$mac_a" tap)"
  echo "$tag: $sent plain frames injected; attack datagrams delivered on A: $attack; legitimate over MACsec: $legit;" \
       "answers in clear on the veth: $veth_answers; answers through MACsec: $tap_answers;" \
       "A rx_not_macsec $(stat_of "$work/a-$tag.out" link.rx_not_macsec); IPv4 packets at A's IP layer: $last_ip_in"
  [[ "$legit" == 3 ]] || fail "$tag: $legit of 3 legitimate datagrams over MACsec arrived"
  last_attack=$attack; last_veth=$veth_answers; last_tap=$tap_answers; last_sent=$sent
}

start_link "$nsb" "$vb" "$mb" "$work/b.json" b --new-key
pid_b=$last_pid
ip -n "$nsb" addr add "$ip_b/24" dev "$mb"

# 1. The attack of the issue, with the lower interface left as it is.
before_arp="$(sysctl_a ipv4/conf/$va/arp_ignore)"
before_rp="$(sysctl_a ipv4/conf/$va/rp_filter)"
before_v6="$(sysctl_a ipv6/conf/$va/disable_ipv6)"
round_with unchanged unchanged
grep -q 'lower_link.*unchanged' "$work/a-unchanged.err" || fail "no warning for lower_link unchanged"
[[ "$last_attack" -gt 0 ]] || fail "baseline: the plain-UDP attack did not get through with lower_link unchanged (test cannot detect it)"
[[ "$((last_veth + last_tap))" -gt 0 ]] || fail "baseline: no answer to plain ARP/ping with lower_link unchanged"
echo "ok: baseline reproduces the attack: $last_attack datagrams delivered, $((last_veth + last_tap)) answers"

# 2. The default ("isolate") and "sysctl-only": nothing gets through.
for policy in isolate sysctl-only; do
  round_with "$policy" "$policy"
  [[ "$last_attack" == 0 ]] || fail "$policy: $last_attack plain datagrams reached sockets on A"
  [[ "$last_veth" == 0 ]] || fail "$policy: $last_veth answers in clear on the lower link"
  [[ "$last_tap" == 0 ]] || fail "$policy: $last_tap answers to plain requests went out through MACsec"
  notmacsec="$(stat_of "$work/a-$policy.out" link.rx_not_macsec)"
  [[ "$notmacsec" -ge "$last_sent" ]] || fail "$policy: only $notmacsec of $last_sent plain frames counted rx_not_macsec"
  grep -q "arp_ignore .* -> 8" "$work/a-$policy.err" || fail "$policy: arp_ignore step not reported: $(cat "$work/a-$policy.err")"
  if [[ "$policy" == isolate ]]; then
    grep -q "nftables table netdev" "$work/a-$policy.err" || fail "isolate: no nftables filter: $(cat "$work/a-$policy.err")"
    # The 200 plain IPv4 frames never reach the IP layer (dropped at ingress);
    # what does is the 12 legitimate datagrams over MACsec and little else.
    [[ "$last_ip_in" -lt 100 ]] || fail "isolate: $last_ip_in IPv4 packets reached A's IP layer: the ingress filter did not drop"
  fi
  [[ "$(stat_of "$work/a-$policy.out" lower_link_restored)" == True ]] || fail "$policy: lower link not restored"
  [[ "$(sysctl_a ipv4/conf/$va/arp_ignore)" == "$before_arp" ]] || fail "$policy: arp_ignore not restored"
  [[ "$(sysctl_a ipv4/conf/$va/rp_filter)" == "$before_rp" ]] || fail "$policy: rp_filter not restored"
  [[ "$(sysctl_a ipv6/conf/$va/disable_ipv6)" == "$before_v6" ]] || fail "$policy: disable_ipv6 not restored"
  ip -n "$nsa" link show "$va" | grep -q NOARP && fail "$policy: NOARP left on $va"
  echo "ok: $policy: 0 of $last_sent plain frames delivered or answered, $notmacsec counted rx_not_macsec, settings restored"
done

# 3. An address on the lower interface is refused with the command to fix it.
ip -n "$nsa" addr add 10.82.0.1/24 dev "$va"
write_config "$work/a-addr.json" a.key b.key "$sci_b" isolate a.pn-state
if ip netns exec "$nsa" "$layersec" macsec up --link "$va" --name "$ma" --config "$work/a-addr.json" --new-key \
  >"$work/addr.out" 2>&1; then
  fail "a lower interface with an IPv4 address was accepted"
fi
grep -q "has address 10.82.0.1/24" "$work/addr.out" || fail "refusal does not name the address: $(cat "$work/addr.out")"
grep -q "ip addr del 10.82.0.1/24 dev $va" "$work/addr.out" || fail "refusal does not say what to run: $(cat "$work/addr.out")"
ip -n "$nsa" link show "$ma" >/dev/null 2>&1 && fail "the MACsec interface was created although the start was refused"
echo "ok: lower interface with an address refused: $(grep -o 'has address.*' "$work/addr.out" | head -c 120)"

stop_link "$pid_b"
echo "PASS: macsec_plain_isolation"
