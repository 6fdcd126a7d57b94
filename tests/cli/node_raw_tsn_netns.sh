#!/usr/bin/env bash
# Two `layersec node` on the raw transport (AF_PACKET, the node frames its own
# Ethernet/IPv4/UDP; the veths carry no address) with a TSN first hop ("tsn"
# section), between two network namespaces. Checks
#   - a "tsn" section without "raw" is refused at start, naming $.tsn;
#   - the publisher's ST event stream (service 0x1111, its port 30501 -> VID 10,
#     PCP 5, class 1, 300 us of each 1 ms cycle) and a BE flood (service
#     0x2222, port 30502 -> VID 20, PCP 0, 3 x 1,200-byte events per ms into a
#     20 Mbit/s port whose BE window holds one of them) leave tagged and
#     shaped: every ST event the shaper sent arrives (0 lost), while BE is held
#     and its excess is dropped and counted (dropped_queue_full > 0);
#   - the subscriber popped the tags it got back from PACKET_AUXDATA (the veth
#     strips them) and dropped nothing as an unknown VID or mismatch;
#   - with tshark: PCP 5 / VID 10 and PCP 0 / VID 20 on the wire.
# Root only; exits 77 with the reason otherwise. A few seconds.
# Usage: bash tests/cli/node_raw_tsn_netns.sh /path/to/layersec
set -euo pipefail

LS="${1:?usage: $0 /path/to/layersec}"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: node_raw_tsn_netns needs root (namespaces, AF_PACKET)"; exit 77; fi
for tool in ip /usr/bin/python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib/netns.sh"
py=/usr/bin/python3
have_tshark=0
command -v tshark >/dev/null 2>&1 && command -v dumpcap >/dev/null 2>&1 && have_tshark=1

id=$$
nsa="lrtA$id"; nsb="lrtB$id"
va="lrta$id"; vb="lrtb$id"
mac_a=02:00:00:81:00:01; mac_b=02:00:00:81:00:02
netns_init node_raw_tsn_netns
netns_add "$nsa" "$nsb"
netns_veth "$nsa" "$va" "$mac_a" "$nsb" "$vb" "$mac_b"

# 1 ms cycle on CLOCK_TAI from 0: ST (class 1, PCP 5..7) 300 us, BE 700 us.
write_tsn() {  # file
  cat >"$1" <<'JSON'
  {
    "port_mbit_s": 20,
    "taprio": "taprio num_tc 2 map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0 sched-entry S 02 300000 sched-entry S 01 700000 clockid CLOCK_TAI",
    "queue_limit_frames": 64,
    "streams": [
      { "match": "ip", "handle": 1, "dst_ip": "10.81.0.2", "protocol": "udp", "src_port": 30501, "set_vid": 10, "set_pcp": 5 },
      { "match": "ip", "handle": 2, "dst_ip": "10.81.0.2", "protocol": "udp", "src_port": 30502, "set_vid": 20, "set_pcp": 0 }
    ]
  }
JSON
}
sd='"service-discovery": {"enable": "true", "multicast": "224.224.224.245", "port": "30490",
    "initial_delay_min": "0", "initial_delay_max": "20", "repetitions_base_delay": "20",
    "repetitions_max": "2", "cyclic_offer_delay": "500", "ttl": "3"}'
write_tsn "$work/tsn.json"
cat >"$work/pub.json" <<JSON
{
  "unicast": "10.81.0.1", "name": "pub", "client_id": "0x1001", $sd,
  "raw": {"interface": "$va", "neighbours": [{"address": "10.81.0.2", "mac": "$mac_b"}]},
  "tsn": $(cat "$work/tsn.json"),
  "services": [
    {"service": "0x1111", "instance": "0x0001", "unreliable": "30501",
     "events": [{"event": "0x8001"}], "eventgroups": [{"eventgroup": "0x0001", "events": ["0x8001"]}]},
    {"service": "0x2222", "instance": "0x0001", "unreliable": "30502",
     "events": [{"event": "0x8001"}, {"event": "0x8002"}, {"event": "0x8003"}],
     "eventgroups": [{"eventgroup": "0x0001", "events": ["0x8001", "0x8002", "0x8003"]}]}
  ],
  "test": {"publish": [
    {"service": "0x1111", "event": "0x8001", "interval_ms": 10, "payload_size": 16},
    {"service": "0x2222", "event": "0x8001", "interval_ms": 1, "payload_size": 1200},
    {"service": "0x2222", "event": "0x8002", "interval_ms": 1, "payload_size": 1200},
    {"service": "0x2222", "event": "0x8003", "interval_ms": 1, "payload_size": 1200}
  ]}
}
JSON
cat >"$work/sub.json" <<JSON
{
  "unicast": "10.81.0.2", "name": "sub", "client_id": "0x2001", $sd,
  "raw": {"interface": "$vb", "neighbours": [{"address": "10.81.0.1", "mac": "$mac_a"}]},
  "tsn": $(cat "$work/tsn.json"),
  "clients": [
    {"service": "0x1111", "instance": "0x0001", "eventgroups": ["0x0001"]},
    {"service": "0x2222", "instance": "0x0001", "eventgroups": ["0x0001"]}
  ]
}
JSON

# "tsn" without "raw": refused at start, naming $.tsn.
"$py" - "$work/sub.json" "$work/udp.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1])); del c["raw"]; json.dump(c, open(sys.argv[2], "w"))
EOF
st=0
"$LS" node --config "$work/udp.json" --duration 1 >"$work/udp.out" 2>&1 || st=$?
[[ $st == 2 ]] || fail "a tsn section without raw: exit $st, expected 2 (configuration error)"
grep -q '\$\.tsn: needs the raw transport' "$work/udp.out" || fail "no clear message: $(cat "$work/udp.out")"
echo "ok: tsn without raw refused: $(head -1 "$work/udp.out")"

cap=""
if [[ $have_tshark == 1 ]]; then
  ip netns exec "$nsb" dumpcap -q -P -i "$vb" -s 64 -w "$work/wire.pcap" >"$work/dumpcap.out" 2>&1 &
  cap=$!
  pids+=("$cap")
  for _ in $(seq 100); do [[ -s "$work/wire.pcap" ]] && break; sleep 0.05; done
fi
ip netns exec "$nsb" "$LS" node --config "$work/sub.json" --json --duration 2.8 --seed 2 \
  >"$work/sub.out" 2>"$work/sub.err" &
sp=$!
pids+=("$sp")
sleep 0.3
st=0
ip netns exec "$nsa" "$LS" node --config "$work/pub.json" --json --duration 2.0 --seed 1 \
  >"$work/pub.out" 2>"$work/pub.err" || st=$?
[[ $st == 0 ]] || fail "publisher exited with $st"
st=0
wait "$sp" || st=$?
[[ $st == 0 ]] || fail "subscriber exited with $st"
if [[ -n "$cap" ]]; then kill -INT "$cap"; wait "$cap" || true; fi

# Figures from both nodes' final counters and the subscriber's event lines.
"$py" - "$work/pub.out" "$work/sub.out" >"$work/figures" <<'EOF'
import json, sys
def lines(p):
    return [json.loads(l) for l in open(p) if l.startswith("{")]
pub, sub = lines(sys.argv[1]), lines(sys.argv[2])
pc = [o for o in pub if o["type"] == "counters"][-1]
sc = [o for o in sub if o["type"] == "counters"][-1]
ev = [o for o in sub if o["type"] == "event"]
st_rx = sum(1 for o in ev if o["service"] == 0x1111)
be_rx = sum(1 for o in ev if o["service"] == 0x2222)
cls = pc["tsn"]["shaper"]["classes"]
print("st_sent", cls[1]["transmitted"])
print("st_queued_at_stop", cls[1]["queued"])
print("st_enqueued", cls[1]["enqueued"])
print("st_dropped", cls[1]["dropped_queue_full"] + cls[1]["dropped_max_sdu"] + cls[1]["dropped_never_fits"])
print("st_rx", st_rx)
print("class0_sent", cls[0]["transmitted"])
print("be_held", cls[0]["held"])
print("be_dropped", cls[0]["dropped_queue_full"])
print("be_rx", be_rx)
print("overruns", cls[0]["transmission_overruns"] + cls[1]["transmission_overruns"])
print("late_starts", pc["tsn"]["shaper"]["driver"]["late_starts"])
print("resyncs", pc["tsn"]["shaper"]["driver"]["resyncs"])
print("frames_sent", pc["tsn"]["shaper"]["driver"]["sent"])
print("max_lateness_us", pc["tsn"]["shaper"]["driver"]["max_lateness_ns"] // 1000)
print("tagged", pc["tsn"]["path"]["tx_tagged"])
p = sc["tsn"]["path"]
print("popped", p["rx_tag_popped"])
print("rx_bad", p["rx_unknown_vid"] + p["rx_tag_mismatch"] + p["rx_untagged_stream"] + p["rx_bad_tag"])
print("sub_rx_stage_dropped", sc["transport"]["rx_stage_dropped"])
EOF
fig() { awk -v k="$1" '$1 == k {print $2}' "$work/figures"; }
st_sent=$(fig st_sent); st_rx=$(fig st_rx); be_dropped=$(fig be_dropped)
[[ $st_sent -ge 100 ]] || fail "the shaper sent only $st_sent ST events (subscription late?)"
[[ $(fig st_dropped) == 0 ]] || fail "the shaper dropped $(fig st_dropped) ST frames"
# Every ST event published to the subscriber went out, but the one the last
# tick queued, which may still wait for its window when the node stops.
[[ $(( $(fig st_enqueued) - st_sent - $(fig st_queued_at_stop) )) == 0 && $(fig st_queued_at_stop) -le 1 ]] ||
  fail "ST: $(fig st_enqueued) enqueued, $st_sent sent, $(fig st_queued_at_stop) queued at stop"
[[ $st_rx == "$st_sent" ]] || fail "ST: $st_rx of $st_sent events arrived"
[[ $be_dropped -gt 0 ]] || fail "BE was not saturated (no queue-full drops)"
[[ $(fig be_held) -gt 0 ]] || fail "no BE frame waited for its gate"
[[ $(fig overruns) == 0 ]] || fail "transmission overruns: $(fig overruns)"
[[ $(fig rx_bad) == 0 ]] || fail "the subscriber dropped $(fig rx_bad) tagged frames as unknown/mismatched"
[[ $(fig popped) -ge $((st_rx + $(fig be_rx))) ]] || fail "the subscriber popped $(fig popped) tags for $st_rx + $(fig be_rx) events"
echo "ok: ST $st_rx of $st_sent events sent arrived (0 lost; $(fig st_queued_at_stop) queued at stop); class 0 (BE + untagged SD) sent $(fig class0_sent), held $(fig be_held), dropped $be_dropped (queue full); BE events received $(fig be_rx); tags popped $(fig popped); overruns 0"
echo "   shaper timing (no assertion): late starts $(fig late_starts) of $(fig frames_sent) frames (> 50 us), max $(fig max_lateness_us) us, resyncs $(fig resyncs); load: $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ -n "$cap" ]]; then
  tshark -r "$work/wire.pcap" -T fields -e vlan.priority -e vlan.id -e eth.type 2>/dev/null | sort | uniq -c \
    >"$work/wire.fields"
  echo "   tshark on the subscriber's veth: count, vlan.priority (PCP), vlan.id, EtherType(s):"
  sed 's/^/     /' "$work/wire.fields"
  n_st=$(tshark -r "$work/wire.pcap" -Y 'vlan.id == 10 && vlan.priority == 5 && udp.srcport == 30501' 2>/dev/null | wc -l)
  n_be=$(tshark -r "$work/wire.pcap" -Y 'vlan.id == 20 && vlan.priority == 0 && udp.srcport == 30502' 2>/dev/null | wc -l)
  [[ $n_st -ge $st_sent ]] || fail "tshark saw $n_st ST frames with PCP 5 / VID 10, the shaper sent $st_sent"
  [[ $n_be -gt 0 ]] || fail "tshark saw no BE frame with PCP 0 / VID 20"
  echo "ok: tshark: $n_st ST frames PCP 5 / VID 10, $n_be BE frames PCP 0 / VID 20"
else
  echo "note: tshark/dumpcap not installed: PCP/VID on the wire not shown (the subscriber's popped tags still show the tags arrived)"
fi
echo "PASS: node_raw_tsn_netns"
