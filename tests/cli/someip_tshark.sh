#!/usr/bin/env bash
# Interop: tshark (Wireshark's SOME/IP and SOME/IP-SD dissectors, an
# independent implementation) decodes frames layersec writes, with the field
# values asserted here. Frames come from `layersec someip encode` (our codec),
# are wrapped by `layersec someip pcap` into Ethernet/IPv4/UDP with checksums,
# and from `layersec someip sd-sim` (our SD state machines in simulated time).
set -euo pipefail
LS="${1:?usage: someip_tshark.sh /path/to/layersec}"
command -v tshark >/dev/null || { echo "FAIL: tshark not installed"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect NAME ACTUAL EXPECTED
  if [[ "$2" == "$3" ]]; then echo "ok   $1"; else echo "FAIL $1: got '$2', want '$3'"; fail=1; fi
}
TS=(tshark -n -d udp.port==30490,someip -d udp.port==30509,someip -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE)

REQ=$("$LS" someip encode '{"messages":[
  {"service":4660,"method":1057,"client":16,"session":5,"interface_version":2,"message_type":0,"payload":"01020304"},
  {"service":4660,"method":32769,"client":0,"session":6,"interface_version":2,"message_type":2,"payload":"aa"}]}')
ERR=$("$LS" someip encode '{"messages":[{"service":4660,"method":1057,"client":16,"session":5,"interface_version":2,"message_type":129,"return_code":3,"payload":""}]}')
SD=$("$LS" someip encode '{"messages":[{"service":65535,"method":33024,"session":7,"interface_version":1,"message_type":2,"sd":{"flags":192,
 "entries":[{"type":1,"index1":0,"num1":2,"index2":2,"num2":2,"service":4660,"instance":1,"major":1,"ttl":3,"minor":5},
            {"type":0,"service":4660,"instance":65535,"major":255,"ttl":3,"minor":4294967295},
            {"type":6,"index1":4,"num1":1,"service":4660,"instance":1,"major":1,"ttl":3,"eventgroup":16,"counter":2},
            {"type":7,"index1":5,"num1":1,"service":4660,"instance":1,"major":1,"ttl":0,"eventgroup":16}],
 "options":[{"type":4,"address":"10.0.0.1","proto":17,"port":30509},{"type":4,"address":"10.0.0.1","proto":6,"port":30510},
            {"type":1,"config":["hostname=ecu1","mode=test"]},{"type":2,"priority":3,"weight":100},
            {"type":6,"address":"fd00::2","proto":17,"port":40001},{"type":20,"address":"239.1.1.1","proto":17,"port":30600}]}}]}')
PAY=$(python3 -c "print(bytes(i % 251 for i in range(3000)).hex())")
TP=$("$LS" someip encode '{"segment_size":1392,"messages":[{"service":4660,"method":1057,"client":16,"session":9,"interface_version":2,"message_type":128,"payload":"'"$PAY"'"}]}')
frames=("10.0.0.2:40001>10.0.0.1:30509=$REQ" "10.0.0.1:30509>10.0.0.2:40001=$ERR" "10.0.0.1:30490>224.224.224.245:30490=$SD")
for t in $TP; do frames+=("10.0.0.1:30509>10.0.0.2:40001=$t"); done
"$LS" someip pcap --out "$tmp/codec.pcap" "${frames[@]}"

fields() { "${TS[@]}" -r "$1" "${@:3}" -T fields -E separator=';' -E aggregator='|' $2 2>/dev/null; }
row() { fields "$tmp/codec.pcap" "$1" -Y "frame.number==$2"; }

H="-e ip.checksum.status -e udp.checksum.status -e someip.serviceid -e someip.methodid -e someip.clientid -e someip.sessionid -e someip.messagetype -e someip.returncode -e someip.protoversion -e someip.interfaceversion -e someip.length"
expect "two messages in one datagram" "$(row "$H" 1)" \
  "1;1;0x1234|0x1234;0x0421|0x8001;0x0010|0x0000;0x0005|0x0006;0x00|0x02;0x00|0x00;0x01|0x01;0x02|0x02;12|9"
expect "error E_UNKNOWN_METHOD" "$(row "$H" 2)" "1;1;0x1234;0x0421;0x0010;0x0005;0x81;0x03;0x01;0x02;8"
TPF="-e someip.messagetype -e someip.length -e someip.tp.offset -e someip.tp.flags.more_segments -e someip.tp.reassembled.length"
expect "tp segment 1" "$(row "$TPF" 4)" "0xa0;1404;0;1;"
expect "tp segment 2" "$(row "$TPF" 5)" "0xa0;1404;1392;1;"
expect "tp last segment, tshark reassembles 3000 bytes" "$(row "$TPF" 6)" "0xa0;228;2784;0;3000"
SDF="-e someip.serviceid -e someip.methodid -e someip.sessionid -e someip.messagetype -e someipsd.flags.reboot -e someipsd.flags.unicast"
expect "sd header" "$(row "$SDF" 3)" "0xffff;0x8100;0x0007;0x02;1;1"
E="-e someipsd.entry.type -e someipsd.entry.serviceid -e someipsd.entry.instanceid -e someipsd.entry.majorver -e someipsd.entry.ttl -e someipsd.entry.minorver -e someipsd.entry.eventgroupid -e someipsd.entry.counter -e someipsd.entry.index1 -e someipsd.entry.numopt1 -e someipsd.entry.index2 -e someipsd.entry.numopt2"
expect "sd entries" "$(row "$E" 3)" \
  "0x01|0x00|0x06|0x07;0x1234|0x1234|0x1234|0x1234;0x0001|0xffff|0x0001|0x0001;1|255|1|1;3|3|3|0;5|4294967295;0x0010|0x0010;0x02|0x00;0x00|0x00|0x04|0x05;0x02|0x00|0x01|0x01;0x02|0x00|0x00|0x00;0x02|0x00|0x00|0x00"
O="-e someipsd.option.type -e someipsd.option.length -e someipsd.option.ipv4address -e someipsd.option.ipv6address -e someipsd.option.port -e someipsd.option.proto -e someipsd.option.config_string_element -e someipsd.option.priority -e someipsd.option.weight"
expect "sd options" "$(row "$O" 3)" \
  "4|4|1|2|6|20;9|9|26|5|21|9;10.0.0.1|10.0.0.1|239.1.1.1;fd00::2;30509|30510|40001|30600;17|6|17|17;hostname=ecu1|mode=test;3;100"
expect "no malformed or error-level expert info" \
  "$("${TS[@]}" -r "$tmp/codec.pcap" -Y '_ws.malformed || _ws.expert.severity >= 6291456' 2>/dev/null | wc -l)" "0"

# Our SD state machines (server on 10.0.0.1, client on 10.0.0.2) in simulated time.
"$LS" someip sd-sim --out "$tmp/sd.pcap" --duration-ms 3500 --seed 1 > "$tmp/sd.json"
SIM=(-e ip.src -e ip.dst -e someip.sessionid -e someipsd.flags.reboot -e someipsd.flags.unicast -e someipsd.entry.type -e someipsd.entry.ttl -e someipsd.entry.eventgroupid -e someipsd.option.type -e someipsd.option.port)
"${TS[@]}" -r "$tmp/sd.pcap" -T fields -E separator=';' -E aggregator='|' "${SIM[@]}" 2>/dev/null > "$tmp/sd.txt"
cat "$tmp/sd.txt"
python3 - "$tmp/sd.txt" "$tmp/sd.json" <<'PY' || fail=1
import json, sys
rows = [l.rstrip("\n").split(";") for l in open(sys.argv[1]) if l.strip()]
events = json.load(open(sys.argv[2]))["events"]
bad = []
def check(name, cond):
    print(("ok   " if cond else "FAIL ") + name)
    if not cond: bad.append(name)
check("every frame decoded as SOME/IP-SD", rows and all(r[5] != "" for r in rows))
first = rows[0]
check("first frame: client's multicast FindService", first[0] == "10.0.0.2" and first[1] == "224.224.224.245" and first[5] == "0x00")
check("reboot and unicast flags set (sessions have not wrapped)", all(r[3] == "1" and r[4] == "1" for r in rows))
# Session ids count per relation: (src, dst) pairs each start at 1 and go up by one.
rel = {}
ok = True
for r in rows:
    key = (r[0], r[1]); s = int(r[2], 16)
    if s != rel.get(key, 0) + 1: ok = False
    rel[key] = s
check("session id per communication relation 1,2,3,...", ok and len(rel) == 4)
offers = [r for r in rows if r[0] == "10.0.0.1" and r[1] == "224.224.224.245" and r[5] == "0x01" and r[6] == "3"]
check("server multicasts offers with its UDP endpoint 30509", len(offers) >= 5 and all(o[8] == "4" and o[9] == "30509" for o in offers))
subs = [r for r in rows if r[0] == "10.0.0.2" and r[1] == "10.0.0.1" and r[5] == "0x06" and r[6] != "0"]
acks = [r for r in rows if r[0] == "10.0.0.1" and r[1] == "10.0.0.2" and r[5] == "0x07" and r[6] != "0"]
check("client subscribes (unicast, eventgroup 0x0010, endpoint 40001) on offers", len(subs) >= 5 and all(s[7] == "0x0010" and s[9] == "40001" for s in subs))
check("server acks each subscribe with the multicast option 30600", len(acks) == len(subs) and all(a[8] == "20" and a[9] == "30600" for a in acks))
check("shutdown: StopSubscribe then StopOffer", rows[-2][5] == "0x06" and rows[-2][6] == "0" and rows[-1][5] == "0x01" and rows[-1][6] == "0")
kinds = [e["event"] for e in events]
check("events: available, subscribed, acked, unsubscribed, unavailable",
      all(k in kinds for k in ["service-available", "subscribed", "subscription-acked", "unsubscribed", "service-unavailable"]))
sys.exit(1 if bad else 0)
PY
expect "sd-sim: no malformed or error-level expert info" \
  "$("${TS[@]}" -r "$tmp/sd.pcap" -Y '_ws.malformed || _ws.expert.severity >= 6291456' 2>/dev/null | wc -l)" "0"
exit $fail
