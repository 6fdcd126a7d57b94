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
#   - with tshark: PCP 5 / VID 10 and PCP 0 / VID 20 on the wire;
#   - the same through a MACsec SecY on each node ("macsec": a `macsec up
#     --config` file; clear-tag layout): the tags are read on the wire before
#     the SecTAG (EtherType 88-E5 behind them), ST still loses nothing although
#     it overtakes queued BE, and the receiving SecY (replay window 0) counts
#     no late PN: frames are protected as they leave the shaper.
#   - the publisher's SecY without its PN state file is refused (no --first-start),
#     and after kill -9 and a restart it sends no PN twice (tshark).
# Root only; exits 77 with the reason otherwise. About 15 seconds.
# Usage: bash tests/cli/node_raw_tsn_netns.sh /path/to/layersec
set -euo pipefail

LS="${1:?usage: $0 /path/to/layersec}"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: node_raw_tsn_netns needs root (namespaces, AF_PACKET)"; exit 77; fi
for tool in ip openssl /usr/bin/python3; do
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
cat >"$work/tsn.json" <<'JSON'
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
# MACsec: static SAKs, SCI = MAC || port 1, as `macsec up --config` reads them.
openssl rand -hex 16 >"$work/a.key"
openssl rand -hex 16 >"$work/b.key"
chmod 0600 "$work"/*.key
write_link() {  # file tx_key rx_key peer_sci
  cat >"$1" <<JSON
{ "cipher_suite": "GCM-AES-128", "port": 1, "pn_state_file": "$1.pn-state",
  "tx": { "encoding_an": 0, "sas": [ { "an": 0, "pn": 1, "key_file": "$2" } ] },
  "rx": [ { "sci": "$4", "sas": [ { "an": 0, "pn": 1, "key_file": "$3" } ] } ] }
JSON
}
write_link "$work/link_a.json" a.key b.key 0200008100020001
write_link "$work/link_b.json" b.key a.key 0200008100010001
sd='"service-discovery": {"enable": "true", "multicast": "224.224.224.245", "port": "30490",
    "initial_delay_min": "0", "initial_delay_max": "20", "repetitions_base_delay": "20",
    "repetitions_max": "2", "cyclic_offer_delay": "500", "ttl": "3"}'
write_nodes() {  # macsec(0|1)
  local ma="" mb=""
  if [[ $1 == 1 ]]; then
    ma='"macsec": {"config": "link_a.json"},'
    mb='"macsec": {"config": "link_b.json"},'
  fi
  cat >"$work/pub.json" <<JSON
{
  "unicast": "10.81.0.1", "name": "pub", "client_id": "0x1001", $sd, $ma
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
  "unicast": "10.81.0.2", "name": "sub", "client_id": "0x2001", $sd, $mb
  "raw": {"interface": "$vb", "neighbours": [{"address": "10.81.0.1", "mac": "$mac_a"}]},
  "tsn": $(cat "$work/tsn.json"),
  "clients": [
    {"service": "0x1111", "instance": "0x0001", "eventgroups": ["0x0001"]},
    {"service": "0x2222", "instance": "0x0001", "eventgroups": ["0x0001"]}
  ]
}
JSON
}

# "tsn" without "raw": refused at start, naming $.tsn.
write_nodes 0
"$py" -c 'import json, sys
c = json.load(open(sys.argv[1])); del c["raw"]; json.dump(c, open(sys.argv[2], "w"))' "$work/sub.json" "$work/udp.json"
st=0
"$LS" node --config "$work/udp.json" --duration 1 >"$work/udp.out" 2>&1 || st=$?
[[ $st == 2 ]] || fail "a tsn section without raw: exit $st, expected 2 (configuration error)"
grep -q '\$\.tsn: needs the raw transport' "$work/udp.out" || fail "no clear message: $(cat "$work/udp.out")"
echo "ok: tsn without raw refused: $(head -1 "$work/udp.out")"

# Figures from both nodes' final counters and the subscriber's event lines.
cat >"$work/figures.py" <<'PY'
import json, sys
def lines(p):
    return [json.loads(l) for l in open(p) if l.startswith("{")]
pub, sub = lines(sys.argv[1]), lines(sys.argv[2])
pc = [o for o in pub if o["type"] == "counters"][-1]
sc = [o for o in sub if o["type"] == "counters"][-1]
ev = [o for o in sub if o["type"] == "event"]
cls = pc["tsn"]["shaper"]["classes"]
drv = pc["tsn"]["shaper"]["driver"]
p = sc["tsn"]["path"]
f = {
    "st_sent": cls[1]["transmitted"], "st_queued_at_stop": cls[1]["queued"], "st_enqueued": cls[1]["enqueued"],
    "st_dropped": cls[1]["dropped_queue_full"] + cls[1]["dropped_max_sdu"] + cls[1]["dropped_never_fits"],
    "st_rx": sum(1 for o in ev if o["service"] == 0x1111), "be_rx": sum(1 for o in ev if o["service"] == 0x2222),
    "class0_sent": cls[0]["transmitted"], "be_held": cls[0]["held"], "be_dropped": cls[0]["dropped_queue_full"],
    "overruns": cls[0]["transmission_overruns"] + cls[1]["transmission_overruns"],
    "late_starts": drv["late_starts"], "resyncs": drv["resyncs"], "frames_sent": drv["sent"],
    "max_lateness_us": drv["max_lateness_ns"] // 1000, "popped": p["rx_tag_popped"],
    "rx_bad": p["rx_unknown_vid"] + p["rx_tag_mismatch"] + p["rx_untagged_stream"] + p["rx_bad_tag"],
}
m_pub, m_sub = pc.get("macsec"), sc.get("macsec")
f["macsec"] = 1 if m_pub and m_sub else 0
if m_pub and m_sub:
    f["tx_encrypted"] = m_pub["secy"]["OutPktsEncrypted"]
    f["rx_ok"] = m_sub["secy"]["InPktsOK"]
    f["rx_late"] = m_sub["secy"]["InPktsLate"]
    f["rx_not_valid"] = m_sub["secy"]["InPktsNotValid"]
for k, v in f.items():
    print(k, v)
PY

run_case() {  # tag macsec(0|1)
  local tag="$1" with_macsec="$2"
  write_nodes "$with_macsec"
  local cap=""
  if [[ $have_tshark == 1 ]]; then
    ip netns exec "$nsb" dumpcap -q -P -i "$vb" -s 64 -w "$work/$tag.pcap" >"$work/dumpcap_$tag.out" 2>&1 &
    cap=$!
    pids+=("$cap")
    for _ in $(seq 100); do [[ -s "$work/$tag.pcap" ]] && break; sleep 0.05; done
  fi
  # --first-start: the MACsec keys are new (their PN state files are created).
  # The subscriber runs until the publisher is done (SIGTERM, 0.3 s after it
  # exits; --duration is only a bound): with a fixed duration a slow start of
  # the publisher (an ASan build on a loaded machine) left its last frames to
  # a subscriber that had already stopped.
  ip netns exec "$nsb" "$LS" node --config "$work/sub.json" --json --duration 60 --seed 2 --first-start \
    >"$work/sub_$tag.out" 2>"$work/sub_$tag.err" &
  local sp=$!
  pids+=("$sp")
  sleep 0.3
  local st=0
  ip netns exec "$nsa" "$LS" node --config "$work/pub.json" --json --duration 1.8 --seed 1 --first-start \
    >"$work/pub_$tag.out" 2>"$work/pub_$tag.err" || st=$?
  [[ $st == 0 ]] || fail "$tag: publisher exited with $st"
  sleep 0.3
  kill -TERM "$sp" 2>/dev/null || true
  st=0
  wait "$sp" || st=$?
  [[ $st == 0 ]] || fail "$tag: subscriber exited with $st"
  if [[ -n "$cap" ]]; then kill -INT "$cap"; wait "$cap" || true; fi

  "$py" "$work/figures.py" "$work/pub_$tag.out" "$work/sub_$tag.out" >"$work/figures_$tag"
  fig() { awk -v k="$1" '$1 == k {print $2}' "$work/figures_$tag"; }
  local st_sent st_rx be_dropped
  st_sent=$(fig st_sent); st_rx=$(fig st_rx); be_dropped=$(fig be_dropped)
  [[ $st_sent -ge 100 ]] || fail "$tag: the shaper sent only $st_sent ST events (subscription late?)"
  [[ $(fig st_dropped) == 0 ]] || fail "$tag: the shaper dropped $(fig st_dropped) ST frames"
  # Every ST event published to the subscriber went out, but the one the last
  # tick queued, which may still wait for its window when the node stops.
  [[ $(( $(fig st_enqueued) - st_sent - $(fig st_queued_at_stop) )) == 0 && $(fig st_queued_at_stop) -le 1 ]] ||
    fail "$tag: ST: $(fig st_enqueued) enqueued, $st_sent sent, $(fig st_queued_at_stop) queued at stop"
  [[ $st_rx == "$st_sent" ]] || fail "$tag: ST: $st_rx of $st_sent events arrived"
  [[ $be_dropped -gt 0 ]] || fail "$tag: BE was not saturated (no queue-full drops)"
  [[ $(fig be_held) -gt 0 ]] || fail "$tag: no BE frame waited for its gate"
  [[ $(fig overruns) == 0 ]] || fail "$tag: transmission overruns: $(fig overruns)"
  [[ $(fig rx_bad) == 0 ]] || fail "$tag: the subscriber dropped $(fig rx_bad) tagged frames as unknown/mismatched"
  [[ $(fig popped) -ge $((st_rx + $(fig be_rx))) ]] ||
    fail "$tag: the subscriber popped $(fig popped) tags for $st_rx + $(fig be_rx) events"
  [[ $(fig macsec) == "$with_macsec" ]] || fail "$tag: MACsec counters present: $(fig macsec), expected $with_macsec"
  echo "ok: $tag: ST $st_rx of $st_sent events sent arrived (0 lost; $(fig st_queued_at_stop) queued at stop); class 0 (BE + untagged SD) sent $(fig class0_sent), held $(fig be_held), dropped $be_dropped (queue full); BE events received $(fig be_rx); tags popped $(fig popped); overruns 0"
  if [[ $with_macsec == 1 ]]; then
    [[ $(fig rx_late) == 0 && $(fig rx_not_valid) == 0 ]] ||
      fail "$tag: the receiving SecY counted $(fig rx_late) late and $(fig rx_not_valid) not valid frames"
    [[ $(fig rx_ok) -ge $(fig popped) ]] || fail "$tag: SecY InPktsOK $(fig rx_ok) < tags popped $(fig popped)"
    echo "ok: $tag: SecY protected $(fig tx_encrypted), the peer's SecY verified $(fig rx_ok), 0 late (PNs in wire order), 0 not valid"
  fi
  echo "   shaper timing (no assertion): late starts $(fig late_starts) of $(fig frames_sent) frames (> 50 us), max $(fig max_lateness_us) us, resyncs $(fig resyncs); load: $(cut -d' ' -f1-3 /proc/loadavg)"

  if [[ -n "$cap" ]]; then
    tshark -r "$work/$tag.pcap" -T fields -e vlan.priority -e vlan.id -e vlan.etype -e eth.type 2>/dev/null |
      sort | uniq -c >"$work/$tag.fields"
    echo "   tshark on the subscriber's veth ($tag): count, PCP, VID, EtherType behind the tag, EtherType(s):"
    sed 's/^/     /' "$work/$tag.fields"
    local inner='udp.srcport == 30501' inner_be='udp.srcport == 30502'
    if [[ $with_macsec == 1 ]]; then inner='vlan.etype == 0x88e5'; inner_be="$inner"; fi
    local n_st n_be
    n_st=$(tshark -r "$work/$tag.pcap" -Y "vlan.id == 10 && vlan.priority == 5 && $inner" 2>/dev/null | wc -l)
    n_be=$(tshark -r "$work/$tag.pcap" -Y "vlan.id == 20 && vlan.priority == 0 && $inner_be" 2>/dev/null | wc -l)
    [[ $n_st -ge $st_sent ]] || fail "$tag: tshark saw $n_st ST frames with PCP 5 / VID 10, the shaper sent $st_sent"
    [[ $n_be -gt 0 ]] || fail "$tag: tshark saw no BE frame with PCP 0 / VID 20"
    echo "ok: $tag: tshark: $n_st frames PCP 5 / VID 10, $n_be frames PCP 0 / VID 20 ($inner)"
  fi
}

run_case plain 0
run_case macsec 1

# The publisher's SecY after a crash: its PN state file is gone -> refused
# without --first-start; present -> after kill -9 and a restart no PN is sent
# twice (SD offers go out protected whether or not anyone listens).
cp "$work/link_a.json.pn-state" "$work/pn-state.keep"
rm "$work/link_a.json.pn-state"
st=0
ip netns exec "$nsa" "$LS" node --config "$work/pub.json" --duration 0.5 >"$work/nostate.out" 2>&1 || st=$?
[[ $st == 3 ]] || fail "a missing PN state file without --first-start: exit $st, expected 3"
grep -q "PN state file .* is missing" "$work/nostate.out" || fail "no clear message: $(cat "$work/nostate.out")"
[[ ! -e "$work/link_a.json.pn-state" ]] || fail "a PN state file was created without --first-start"
echo "ok: missing PN state file refused: $(grep -o 'PN state file [^:]*is missing' "$work/nostate.out")"
cp "$work/pn-state.keep" "$work/link_a.json.pn-state"
if [[ $have_tshark == 1 ]]; then
  ip netns exec "$nsb" dumpcap -q -P -i "$vb" -s 64 -w "$work/restart.pcap" >"$work/dumpcap_restart.out" 2>&1 &
  cap=$!
  pids+=("$cap")
  for _ in $(seq 100); do [[ -s "$work/restart.pcap" ]] && break; sleep 0.05; done
  ip netns exec "$nsa" "$LS" node --config "$work/pub.json" --duration 5 >"$work/crash.out" 2>&1 &
  cp_pid=$!
  sleep 0.8
  kill -9 "$cp_pid"
  wait "$cp_pid" 2>/dev/null || true
  ip netns exec "$nsa" "$LS" node --config "$work/pub.json" --duration 0.8 >"$work/restart.out" 2>&1 ||
    fail "the restart after kill -9 failed: $(tail -2 "$work/restart.out")"
  sleep 0.2
  kill -INT "$cap"; wait "$cap" || true
  pns() { tshark -r "$1" -Y "macsec && eth.src == $mac_a" -T fields -e macsec.PN 2>/dev/null; }
  max_before=$(pns "$work/macsec.pcap" | sort -n | tail -1)
  pns "$work/restart.pcap" >"$work/restart.pns"
  n_after=$(wc -l <"$work/restart.pns")
  min_after=$(sort -n "$work/restart.pns" | head -1)
  dups=$(cat <(pns "$work/macsec.pcap") "$work/restart.pns" | sort | uniq -d | wc -l)
  [[ $n_after -ge 2 ]] || fail "restart: only $n_after secure frames from the publisher captured"
  [[ $min_after -gt $max_before && $dups == 0 ]] ||
    fail "restart: PNs reused (highest before $max_before, lowest after $min_after, $dups repeated)"
  echo "ok: kill -9 and restart: $n_after secure frames, PNs $min_after.. (highest before: $max_before), none repeated"
else
  echo "note: tshark/dumpcap not installed: PNs across a kill -9 and restart not checked"
fi
[[ $have_tshark == 1 ]] ||
  echo "note: tshark/dumpcap not installed: PCP/VID on the wire not shown (the subscriber's popped tags still show the tags arrived)"
echo "PASS: node_raw_tsn_netns"
