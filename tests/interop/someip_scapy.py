#!/usr/bin/python3
"""Interop: scapy (scapy.contrib.automotive.someip, an independent SOME/IP and
SOME/IP-SD implementation) against layersec's codecs, both directions.

scapy -> layersec: scapy builds packets, `layersec someip decode` / `reassemble`
parse them and the JSON must carry the same field values.
layersec -> scapy: `layersec someip encode` / `sd-sim` produce bytes, scapy
dissects them and its fields must equal what we encoded.

Usage: someip_scapy.py /path/to/layersec
"""
import json
import os
import subprocess
import sys
import tempfile

from scapy.all import rdpcap, raw, UDP
from scapy.contrib.automotive.someip import (
    SOMEIP, SD, SDEntry_Service, SDEntry_EventGroup, SDOption_IP4_EndPoint,
    SDOption_IP6_EndPoint, SDOption_IP4_Multicast, SDOption_IP4_SD_EndPoint,
    SDOption_Config, SDOption_LoadBalance)

LS = sys.argv[1]
failures = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else f": {detail}"))
    if not cond:
        failures.append(name)


def ls(*args):
    out = subprocess.run([LS, "someip", *args], check=True, capture_output=True, text=True).stdout
    return out


def decode(pkt_bytes):
    return json.loads(ls("decode", pkt_bytes.hex()))


def encode(obj):
    return bytes.fromhex(ls("encode", json.dumps(obj)).strip())


# ---- scapy -> layersec ---------------------------------------------------------

req = SOMEIP(srv_id=0x1234, sub_id=0, method_id=0x0421, client_id=0x0010, session_id=5,
             iface_ver=2, msg_type=SOMEIP.TYPE_REQUEST) / b"\x01\x02\x03"
d = decode(raw(req))
m = d["messages"][0]
check("scapy request -> header fields",
      (m["service"], m["method"], m["client"], m["session"], m["interface_version"], m["message_type"],
       m["length"], m["payload"]) == (0x1234, 0x0421, 0x10, 5, 2, 0x00, 11, "010203"), m)

ev = SOMEIP(srv_id=0x1234, sub_id=1, event_id=0x0001, msg_type=SOMEIP.TYPE_NOTIFICATION) / b"\xaa"
err = SOMEIP(srv_id=0x1234, sub_id=0, method_id=0x0421, client_id=0x10, session_id=5, iface_ver=2,
             msg_type=SOMEIP.TYPE_ERROR, retcode=SOMEIP.RET_E_UNKNOWN_METHOD)
d = decode(raw(ev) + raw(err))
check("scapy notification + error in one datagram",
      len(d["messages"]) == 2 and d["messages"][0]["method"] == 0x8001 and d["messages"][0]["message_type"] == 2
      and d["messages"][1]["message_type"] == 0x81 and d["messages"][1]["return_code"] == 3, d)

tp = SOMEIP(srv_id=0x1234, method_id=0x0421, msg_type=SOMEIP.TYPE_TP_RESPONSE, offset=87, more_seg=1) / bytes(32)
d = decode(raw(tp))["messages"][0]
check("scapy TP_RESPONSE segment -> offset/more", d["message_type"] == 0xA0 and d["tp"]["offset"] == 1392
      and d["tp"]["more"] is True and len(d["tp"]["data"]) == 64, d)

big = bytes((i * 7) % 256 for i in range(4000))
whole = SOMEIP(srv_id=0x1234, method_id=0x0421, client_id=0x10, session_id=9, iface_ver=2,
               msg_type=SOMEIP.TYPE_TP_RESPONSE) / big
frags = whole.fragment()  # scapy's own segmentation, 1392-byte segments
r = json.loads(ls("reassemble", *[raw(f).hex() for f in reversed(frags)]))
res = r["result"]["messages"][0] if r["result"] else {}
check("scapy fragment() reassembled by layersec (reverse order)",
      r["status"][-1] == "complete" and res.get("message_type") == 0x80 and res.get("length") == 8 + len(big)
      and res.get("payload") == big.hex(), r["status"])

cfg = SDOption_Config.make_string({"hostname": "ecu1"})
sd = SD(flags=0xC0)
sd.set_entryArray([
    SDEntry_Service(type=0x01, srv_id=0x1234, inst_id=1, major_ver=1, ttl=3, minor_ver=5,
                    index_1=0, n_opt_1=2, index_2=2, n_opt_2=2),
    SDEntry_Service(type=0x00, srv_id=0x4321, inst_id=0xFFFF, major_ver=0xFF, ttl=3, minor_ver=0xFFFFFFFF),
    SDEntry_EventGroup(type=0x06, srv_id=0x1234, inst_id=1, major_ver=1, ttl=3, cnt=2, eventgroup_id=0x10,
                       index_1=4, n_opt_1=1),
    SDEntry_EventGroup(type=0x07, srv_id=0x1234, inst_id=1, major_ver=1, ttl=0, eventgroup_id=0x10,
                       index_1=5, n_opt_1=1),
])
sd.set_optionArray([
    SDOption_IP4_EndPoint(addr="10.0.0.1", l4_proto=0x11, port=30509),
    SDOption_IP4_SD_EndPoint(addr="10.0.0.1", l4_proto=0x11, port=30490),
    SDOption_Config(cfg_str=cfg),
    SDOption_LoadBalance(priority=3, weight=100),
    SDOption_IP6_EndPoint(addr="fd00::2", l4_proto=0x06, port=40001),
    SDOption_IP4_Multicast(addr="239.1.1.1", l4_proto=0x11, port=30600),
])
pkt = SOMEIP(session_id=7) / sd
d = decode(raw(pkt))["messages"][0]
s = d.get("sd", {})
check("scapy SD header -> SD message", d["service"] == 0xFFFF and d["method"] == 0x8100 and s.get("reboot") is True
      and s.get("unicast") is True, d)
es = s.get("entries", [])
check("scapy SD entries -> kinds",
      [e["kind"] for e in es] == ["OfferService", "FindService", "SubscribeEventgroup", "SubscribeEventgroupNack"], es)
check("scapy SD offer entry fields", es and (es[0]["service"], es[0]["instance"], es[0]["major"], es[0]["ttl"], es[0]["minor"],
      es[0]["index1"], es[0]["num1"], es[0]["index2"], es[0]["num2"]) == (0x1234, 1, 1, 3, 5, 0, 2, 2, 2), es[:1])
check("scapy SD subscribe entry fields", len(es) > 2 and (es[2]["eventgroup"], es[2]["counter"], es[2]["index1"]) == (0x10, 2, 4), es[2:3])
os_ = s.get("options", [])
check("scapy SD options -> types/values",
      [(o["type"], o.get("address"), o.get("proto"), o.get("port")) for o in os_] ==
      [(4, "10.0.0.1", 17, 30509), (0x24, "10.0.0.1", 17, 30490), (1, None, None, None), (2, None, None, None),
       (6, "fd00::2", 6, 40001), (0x14, "239.1.1.1", 17, 30600)], os_)
check("scapy SD config/load-balancing options", len(os_) > 3 and os_[2].get("config") == ["hostname=ecu1"]
      and os_[3].get("priority") == 3 and os_[3].get("weight") == 100, os_[2:4])

# A broken SD message from scapy (option index out of range) is rejected, not half-parsed.
bad = SD(flags=0xC0)
bad.set_entryArray([SDEntry_Service(type=0x01, srv_id=1, inst_id=1, major_ver=1, ttl=3, index_1=3, n_opt_1=1)])
bad.set_optionArray([SDOption_IP4_EndPoint(addr="10.0.0.1", l4_proto=0x11, port=1)])
d = decode(raw(SOMEIP() / bad))["messages"][0]
check("scapy SD with option index out of range -> rejected", d.get("sd_error") == "option-index-out-of-range", d)

# scapy requests against our error policy: the error responses scapy gets back
# answer its requests (scapy's answers()) and carry the prescribed return codes.
services = json.dumps({"services": [{"id": 0x1234, "major": 2, "methods": {"1": "rr", "2": "ff"}}]})
cases = [
    ("good request delivered", SOMEIP(srv_id=0x1234, method_id=1, iface_ver=2, client_id=1, session_id=1), "deliver", None),
    ("wrong protocol version", SOMEIP(srv_id=0x1234, method_id=1, iface_ver=2, proto_ver=2, client_id=1, session_id=2),
     "reply-error", SOMEIP.RET_E_WRONG_PROTOCOL_V),
    ("unknown service", SOMEIP(srv_id=0x4321, method_id=1, iface_ver=2, client_id=1, session_id=3),
     "reply-error", SOMEIP.RET_E_UNKNOWN_SERVICE),
    ("unknown method", SOMEIP(srv_id=0x1234, method_id=9, iface_ver=2, client_id=1, session_id=4),
     "reply-error", SOMEIP.RET_E_UNKNOWN_METHOD),
    ("wrong interface version", SOMEIP(srv_id=0x1234, method_id=1, iface_ver=7, client_id=1, session_id=5),
     "reply-error", SOMEIP.RET_E_WRONG_INTERFACE_V),
    ("fire-and-forget to unknown method: dropped", SOMEIP(srv_id=0x1234, method_id=9, iface_ver=2,
     msg_type=SOMEIP.TYPE_REQUEST_NO_RET), "drop", None),
    ("error message is never answered", SOMEIP(srv_id=0x4321, method_id=1, msg_type=SOMEIP.TYPE_ERROR, retcode=1),
     "drop", None),
]
for name, q, action, rc in cases:
    v = json.loads(ls("respond", "--services", services, raw(q).hex()))["verdicts"][0]
    ok = v["action"] == action
    if ok and rc is not None:
        a = SOMEIP(bytes.fromhex(v["response"]))
        ok = (a.msg_type == SOMEIP.TYPE_ERROR and a.retcode == rc and a.answers(q) and a.srv_id == q.srv_id
              and a.session_id == q.session_id and a.client_id == q.client_id)
    check("error policy: " + name, ok, v)
truncated = raw(SOMEIP(srv_id=0x1234, method_id=1, iface_ver=2, client_id=1, session_id=6) / b"abcd")
truncated = truncated[:4] + (100).to_bytes(4, "big") + truncated[8:]
v = json.loads(ls("respond", "--services", services, truncated.hex()))["verdicts"][0]
check("error policy: length field lies -> E_MALFORMED_MESSAGE",
      v["action"] == "reply-error" and SOMEIP(bytes.fromhex(v["response"])).retcode == SOMEIP.RET_E_MALFORMED_MSG, v)

# ---- layersec -> scapy ---------------------------------------------------------

b = encode({"messages": [{"service": 0x1234, "method": 0x0421, "client": 0x10, "session": 5, "interface_version": 2,
                          "message_type": 0, "payload": "0102"}]})
p = SOMEIP(b)
check("layersec request -> scapy fields",
      (p.srv_id, p.sub_id, p.method_id, p.len, p.client_id, p.session_id, p.proto_ver, p.iface_ver, p.msg_type, p.retcode,
       raw(p.payload)) == (0x1234, 0, 0x0421, 10, 0x10, 5, 1, 2, 0, 0, b"\x01\x02"), p.summary())

segs = ls("encode", json.dumps({"segment_size": 1392, "messages": [{"service": 0x1234, "method": 0x8005, "session": 3,
          "interface_version": 1, "message_type": 2, "payload": big.hex()}]})).split()
ps = [SOMEIP(bytes.fromhex(x)) for x in segs]
check("layersec TP segments -> scapy offset/more_seg",
      [(q.msg_type, q.offset * 16, q.more_seg, len(raw(q.payload))) for q in ps] ==
      [(0x22, 0, 1, 1392), (0x22, 1392, 1, 1392), (0x22, 2784, 0, 4000 - 2784)],
      [(q.msg_type, q.offset, q.more_seg) for q in ps])
check("layersec TP segments concatenate to the payload", b"".join(raw(q.payload) for q in ps) == big)

b = encode({"messages": [{"service": 0xFFFF, "method": 0x8100, "session": 9, "interface_version": 1, "message_type": 2,
   "sd": {"flags": 0x40, "entries": [
       {"type": 1, "index1": 0, "num1": 1, "service": 0x1234, "instance": 2, "major": 3, "ttl": 0xFFFFFF, "minor": 4},
       {"type": 7, "index1": 1, "num1": 1, "service": 0x1234, "instance": 2, "major": 3, "ttl": 5, "eventgroup": 0x22,
        "counter": 1}],
   "options": [{"type": 4, "address": "192.168.0.1", "proto": 6, "port": 30511},
               {"type": 0x14, "address": "239.2.2.2", "proto": 17, "port": 30602}]}}]})
p = SOMEIP(b)
sdl = p[SD]
check("layersec SD -> scapy header/flags", p.srv_id == 0xFFFF and p.msg_type == 2 and p.session_id == 9
      and sdl.get_flag("REBOOT") == 0 and sdl.get_flag("UNICAST") == 1)
e0, e1 = sdl.entry_array
check("layersec offer entry -> scapy", (e0.type, e0.srv_id, e0.inst_id, e0.major_ver, e0.ttl, e0.minor_ver, e0.index_1,
      e0.n_opt_1) == (1, 0x1234, 2, 3, 0xFFFFFF, 4, 0, 1))
check("layersec ack entry -> scapy", (e1.type, e1.eventgroup_id, e1.cnt, e1.ttl, e1.index_1) == (7, 0x22, 1, 5, 1))
o0, o1 = sdl.option_array
check("layersec options -> scapy", isinstance(o0, SDOption_IP4_EndPoint) and o0.addr == "192.168.0.1" and o0.l4_proto == 6
      and o0.port == 30511 and o0.len == 9 and isinstance(o1, SDOption_IP4_Multicast) and o1.addr == "239.2.2.2"
      and o1.port == 30602)

# Our SD state machines' traffic, read by scapy from the pcap.
with tempfile.TemporaryDirectory() as tmp:
    pcap = os.path.join(tmp, "sd.pcap")
    ls("sd-sim", "--out", pcap, "--duration-ms", "2500", "--seed", "3")
    frames = rdpcap(pcap)
    kinds = []
    for f in frames:
        sp = SOMEIP(raw(f[UDP].payload))
        for e in sp[SD].entry_array:
            kinds.append((e.type, e.ttl != 0))
    check("sd-sim pcap: scapy dissects every frame as SD", len(kinds) >= len(frames) and len(frames) > 5)
    check("sd-sim pcap: find, offer, subscribe, ack, stop-subscribe, stop-offer all present",
          all(k in kinds for k in [(0, True), (1, True), (6, True), (7, True), (6, False), (1, False)]), kinds)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
