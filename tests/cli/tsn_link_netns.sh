#!/usr/bin/env bash
# The MACsec link with a TSN first hop (`layersec macsec up --tsn FILE`)
# between two network namespaces over a veth pair. Checks
#   - a bad TSN file is refused before anything changes, naming the field;
#   - clear-tag layout: UDP to port 5000 (ST, VID 10 PCP 5) and port 6000 (BE,
#     VID 20 PCP 0) round trips; the receiver popped the first-hop tags
#     (rx_tag_popped > 0). On a veth the kernel strips a received 802.1Q tag
#     into packet metadata: with the tag in clear (not under the ICV) a frame
#     whose tag was lost would still verify but arrive untagged, so
#     rx_tag_popped > 0 and rx_untagged counting only ARP show that
#     PacketSocket put the tag back from PACKET_AUXDATA;
#   - clear-tag with clear_tags_in_icv: the same round trips (a tag lost on the
#     way would fail the ICV);
#   - standard layout: the same round trips, the tag inside the ciphertext;
#   - with tshark: what a downstream bridge can read on the veth in each
#     layout (PCP/VID with clear-tag; nothing but the SecTAG with standard).
# Root only (namespaces, TAP, AF_PACKET); exits 77 with the reason otherwise.
# Usage: bash tests/cli/tsn_link_netns.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: tsn_link_netns needs root (namespaces, TAP, AF_PACKET)"; exit 77; fi
for tool in ip openssl /usr/bin/python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
[[ -c /dev/net/tun ]] || { echo "SKIP: no /dev/net/tun"; exit 77; }
lib="$(dirname "${BASH_SOURCE[0]}")/lib"
source "$lib/netns.sh"
source "$lib/macsec.sh"
py=/usr/bin/python3
have_tshark=0
command -v tshark >/dev/null 2>&1 && command -v dumpcap >/dev/null 2>&1 && have_tshark=1

id=$$
nsa="lstA$id"; nsb="lstB$id"
va="lsta$id"; vb="lstb$id"
ma="lsxa$id"; mb="lsxb$id"
netns_init tsn_link_netns
netns_add "$nsa" "$nsb"
netns_veth "$nsa" "$va" 02:00:00:7a:00:01 "$nsb" "$vb" 02:00:00:7a:00:02

umask 077
openssl rand -hex 16 >"$work/a.key"
openssl rand -hex 16 >"$work/b.key"
chmod 0600 "$work"/*.key
write_config() {  # file tx_key rx_key peer_sci pn_state_file
  cat >"$1" <<JSON
{
  "cipher_suite": "GCM-AES-128", "pn_state_file": "$5", "port": 1,
  "tx": { "encoding_an": 0, "sas": [ { "an": 0, "pn": 1, "key_file": "$2" } ] },
  "rx": [ { "sci": "$4", "sas": [ { "an": 0, "pn": 1, "key_file": "$3" } ] } ]
}
JSON
}
# SCIs are the veth MACs || port 1.
write_config "$work/a.json" a.key b.key 0200007a00020001 a.pn-state
write_config "$work/b.json" b.key a.key 0200007a00010001 b.pn-state

# The schedule (as a taprio user writes it): ST = class 1 (PCP 5..7) 300 us,
# BE = class 0 700 us, cycle 1 ms on CLOCK_TAI from 0, so both ends align.
cat >"$work/sched.txt" <<'EOF'
tc qdisc replace dev eth0 parent root handle 100 taprio num_tc 2 \
   map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0 \
   sched-entry S 02 300000 sched-entry S 01 700000 clockid CLOCK_TAI
EOF
write_tsn() {  # file layout in_icv peer_ip peer_mac
  cat >"$1" <<JSON
{
  "port_mbit_s": 100, "taprio_file": "sched.txt", "layout": "$2", "clear_tags_in_icv": $3,
  "streams": [
    { "match": "ip", "handle": 1, "dst_ip": "$4", "protocol": "udp", "dst_port": 5000, "set_vid": 10, "set_pcp": 5 },
    { "match": "ip", "handle": 2, "dst_ip": "$4", "protocol": "udp", "src_port": 5000, "set_vid": 10, "set_pcp": 5 },
    { "match": "null", "handle": 3, "dst_mac": "$5", "untagged_only": true, "set_vid": 20, "set_pcp": 0 }
  ]
}
JSON
}

# A bad TSN file is refused, naming the field, before any interface exists.
write_tsn "$work/bad.json" clear-tag false 10.81.0.2 02:00:00:7a:00:02
sed -i 's/"set_pcp": 5 },/"set_pcp": 9 },/' "$work/bad.json"
if ip netns exec "$nsa" "$layersec" macsec up --link "$va" --name "$ma" --config "$work/a.json" --new-key \
  --tsn "$work/bad.json" >"$work/bad.out" 2>&1; then
  fail "a TSN file with set_pcp 9 was accepted"
fi
grep -q "/streams/0/set_pcp" "$work/bad.out" || fail "TSN error does not name the field: $(cat "$work/bad.out")"
ip -n "$nsa" link show "$ma" >/dev/null 2>&1 && fail "the TAP exists after a refused start"
echo "ok: bad TSN file refused: $(grep -m1 set_pcp "$work/bad.out")"
# --realtime schedules our own thread: refused, naming it, with the kernel back end.
if ip netns exec "$nsa" "$layersec" macsec up --link "$va" --name "$ma" --config "$work/a.json" --new-key \
  --backend kernel --realtime >"$work/rtk.out" 2>&1; then
  fail "--realtime was accepted with the kernel back end"
fi
grep -q -- "--realtime: the kernel back end" "$work/rtk.out" || fail "kernel --realtime refusal: $(cat "$work/rtk.out")"

udp_echo() {  # port count -> replies (A -> B -> A)
  ip netns exec "$nsb" "$py" "$lib/udp_echo.py" serve 10.81.0.2 "$1" 4 &
  local srv=$!
  for _ in $(seq 100); do ip netns exec "$nsb" ss -uln 2>/dev/null | grep -q "10.81.0.2:$1 " && break; sleep 0.05; done
  ip netns exec "$nsa" "$py" "$lib/udp_echo.py" ping 10.81.0.2 "$1" "$2" 2>"$work/rtt_$1.err"
  wait "$srv" || true
}

run_layout() {  # layout in_icv tag
  local layout="$1" in_icv="$2" tag="$3"
  write_tsn "$work/tsn_a.json" "$layout" "$in_icv" 10.81.0.2 02:00:00:7a:00:02
  write_tsn "$work/tsn_b.json" "$layout" "$in_icv" 10.81.0.1 02:00:00:7a:00:01
  local new=--new-key
  [[ -f "$work/a.pn-state" ]] && new=""
  # A's link runs in SCHED_FIFO (--realtime): the shaper's thread is served as soon as it wakes.
  start_link "$nsa" "$va" "$ma" "$work/a.json" "a_$tag" $new --tsn "$work/tsn_a.json" --realtime; local pa=$last_pid
  # (the TAP is up before the line is printed: wait for it, slow under ASan)
  for _ in $(seq 200); do grep -q "realtime:" "$work/a_$tag.err" && break; sleep 0.05; done
  grep -q "realtime: SCHED_FIFO priority 60, memory locked" "$work/a_$tag.err" ||
    fail "$tag: A did not enter SCHED_FIFO: $(cat "$work/a_$tag.err")"
  start_link "$nsb" "$vb" "$mb" "$work/b.json" "b_$tag" $new --tsn "$work/tsn_b.json"; local pb=$last_pid
  ip -n "$nsa" addr add 10.81.0.1/24 dev "$ma"
  ip -n "$nsb" addr add 10.81.0.2/24 dev "$mb"
  local mtu
  mtu="$(ip -n "$nsa" -o link show "$ma" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')"
  [[ "$mtu" == 1464 ]] || fail "$tag: TAP MTU $mtu, expected 1500 - 32 - 4 (first-hop tag) = 1464"
  local cap=""
  if [[ $have_tshark == 1 ]]; then
    ip netns exec "$nsb" dumpcap -q -P -i "$vb" -w "$work/$tag.pcap" >"$work/dumpcap_$tag.out" 2>&1 &
    cap=$!
    pids+=("$cap")
    for _ in $(seq 100); do [[ -s "$work/$tag.pcap" ]] && break; sleep 0.05; done
    sleep 0.3
  fi
  local st be
  st="$(udp_echo 5000 5)"
  be="$(udp_echo 6000 5)"
  [[ "$st" == 5 ]] || fail "$tag: ST (port 5000) echo: $st of 5 replies"
  [[ "$be" == 5 ]] || fail "$tag: BE (port 6000) echo: $be of 5 replies"
  if [[ -n "$cap" ]]; then sleep 0.3; kill -INT "$cap"; wait "$cap" || true; fi
  stop_link "$pa"
  stop_link "$pb"
  local popped_b untagged_b tagged_a st_sent
  popped_b="$(stat_of "$work/b_$tag.out" tsn.path.rx_tag_popped)"
  untagged_b="$(stat_of "$work/b_$tag.out" tsn.path.rx_untagged)"
  tagged_a="$(stat_of "$work/a_$tag.out" tsn.path.tx_tagged)"
  st_sent="$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tsn"]["shaper"]["classes"][1]["transmitted"])' "$work/a_$tag.out")"
  [[ "$tagged_a" -ge 10 ]] || fail "$tag: A tagged $tagged_a frames (expected >= 10)"
  [[ "$popped_b" -ge 10 ]] || fail "$tag: B popped $popped_b first-hop tags (expected >= 10: the tag came back via PACKET_AUXDATA)"
  [[ "$st_sent" -ge 5 ]] || fail "$tag: A's shaper sent $st_sent ST frames"
  [[ "$(stat_of "$work/b_$tag.out" tsn.path.rx_unknown_tag)" == 0 ]] || fail "$tag: B dropped tags it should know"
  echo "ok: $tag: ST 5/5 and BE 5/5 echoes; A tagged $tagged_a, B popped $popped_b tags (untagged delivered: $untagged_b, ARP), A's shaper sent $st_sent ST frames"
  if [[ -n "$cap" ]]; then
    tshark -r "$work/$tag.pcap" -T fields -e vlan.priority -e vlan.id -e eth.type 2>/dev/null | sort | uniq -c \
      >"$work/$tag.fields"
    echo "   tshark on the veth ($tag): count, vlan.priority (PCP), vlan.id, EtherType(s):"
    sed 's/^/     /' "$work/$tag.fields"
    if [[ "$layout" == clear-tag ]]; then
      tshark -r "$work/$tag.pcap" -Y 'vlan.id == 10 && vlan.priority == 5' 2>/dev/null | grep -q . ||
        fail "$tag: a bridge cannot read VID 10 / PCP 5 on the veth"
    else
      [[ "$(tshark -r "$work/$tag.pcap" -Y vlan 2>/dev/null | wc -l)" == 0 ]] || fail "$tag: a VLAN tag is readable"
      [[ "$(tshark -r "$work/$tag.pcap" -T fields -e eth.type 2>/dev/null | grep -v -c '^0x88e5$' || true)" == 0 ]] ||
        fail "$tag: frames other than 0x88E5 on the veth"
    fi
  fi
}

run_layout clear-tag false clear
run_layout clear-tag true clear_icv
run_layout standard false standard
[[ $have_tshark == 1 ]] || echo "note: tshark/dumpcap not installed: the bridge's view was not shown"
echo "PASS: tsn_link_netns"
