#!/usr/bin/python3
"""Interop: `layersec node` on real sockets against scapy
(scapy.contrib.automotive.someip) as a foreign SOME/IP peer, over a veth
pair between two network namespaces.

Runs inside the peer namespace (10.77.0.2); starts the node in the node
namespace (10.77.0.1) with `ip netns exec`.

  (a) scapy offers service 0x4444/1 by SD and, once subscribed, sends
      notifications; our node (client) must send a well-formed
      SubscribeEventgroup (entry fields, IPv4 endpoint option with its
      address, UDP and port) and print every notification.
  (b) our node offers 0x1234/1 (examples/node/echo_server.json); scapy checks
      the Offer, sends a FindService and gets an Offer back, sends a
      SubscribeEventgroup and gets an Ack, then receives the 0x8001
      notifications and the field 0x8002's initial value.
  (c) scapy's requests get our echo response (scapy's answers() agrees), an
      unknown method gets E_UNKNOWN_METHOD, and the node prints the requests.

Usage (as root, inside the peer namespace):
  someip_node_scapy.py /path/to/layersec NODE_NETNS /path/to/examples/node
"""
import json
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time

from scapy.all import raw
from scapy.contrib.automotive.someip import (
    SOMEIP, SD, SDEntry_Service, SDEntry_EventGroup, SDOption_IP4_EndPoint)

LS, NODE_NS, EXAMPLES = sys.argv[1], sys.argv[2], sys.argv[3]
NODE_IP, PEER_IP = "10.77.0.1", "10.77.0.2"
SD_GROUP, SD_PORT = "224.224.224.245", 30490
IP_PKTINFO = 8  # Linux; not exported by Python's socket module

failures = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else f": {detail}"), flush=True)
    if not cond:
        failures.append(name)
    return cond


# ---- sockets -------------------------------------------------------------------

def sd_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", SD_PORT))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 socket.inet_aton(SD_GROUP) + socket.inet_aton(PEER_IP))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(PEER_IP))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
    s.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
    return s


def udp_socket(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((PEER_IP, port))
    return s


def recv(s, timeout):
    """One datagram (bytes, source, destination address) or None."""
    r, _, _ = select.select([s], [], [], max(0.0, timeout))
    if not r:
        return None
    data, anc, _, src = s.recvmsg(65535, socket.CMSG_SPACE(12))
    dst = None
    for level, kind, blob in anc:
        if level == socket.IPPROTO_IP and kind == IP_PKTINFO and len(blob) >= 12:
            dst = socket.inet_ntoa(blob[8:12])
    return data, src, dst


class SdPeer:
    """scapy's side of SD: one session counter, reboot flag set (a fresh peer)."""

    def __init__(self):
        self.sock = sd_socket()
        self.session = 0

    def send(self, entries, options, dest):
        self.session = self.session % 0xFFFF + 1
        sd = SD(flags=0xC0)
        sd.set_entryArray(entries)
        if options:
            sd.set_optionArray(options)
        pkt = SOMEIP(session_id=self.session, iface_ver=1, msg_type=SOMEIP.TYPE_NOTIFICATION) / sd
        self.sock.sendto(raw(pkt), dest)

    def entries_from(self, timeout, source_ip=NODE_IP):
        """Yields (entry, options_of_run1, source, destination) for SD entries from source_ip."""
        end = time.monotonic() + timeout
        while True:
            got = recv(self.sock, end - time.monotonic())
            if got is None:
                return
            data, src, dst = got
            if src[0] != source_ip:
                continue
            p = SOMEIP(data)
            if SD not in p:
                continue
            sd = p[SD]
            opts = list(sd.option_array or [])
            for e in sd.entry_array or []:
                yield e, opts[e.index_1:e.index_1 + e.n_opt_1] if e.n_opt_1 else [], src, dst, p


# ---- node process ----------------------------------------------------------------

def start_node(config, duration, log):
    out = open(log, "w")
    return subprocess.Popen(["ip", "netns", "exec", NODE_NS, LS, "node", "--config", config, "--json",
                             "--duration", str(duration), "--seed", "7"], stdout=out, stderr=subprocess.STDOUT)


def node_lines(proc, log):
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.terminate()
        proc.wait()
    check("node exited cleanly", proc.returncode == 0, f"exit {proc.returncode}: {open(log).read()[-2000:]}")
    lines = []
    for line in open(log):
        line = line.strip()
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def endpoint_ok(opts, ip, port=None):
    for o in opts:
        if isinstance(o, SDOption_IP4_EndPoint) and o.addr == ip and o.l4_proto == 0x11 and o.len == 9 \
                and (port is None or o.port == port):
            return o
    return None


# ---- (a) scapy offers, our node subscribes ------------------------------------------

def scenario_a(tmp):
    print("--- (a) scapy offers 0x4444/1, layersec node subscribes")
    cfg = {
        "unicast": NODE_IP,
        "network": "scapy-interop-client",
        "service-discovery": {"initial_delay_min": 0, "initial_delay_max": 20, "repetitions_base_delay": 30,
                              "repetitions_max": 2, "cyclic_offer_delay": 500, "ttl": 3},
        "clients": [{"service": "0x4444", "instance": "0x0001", "unreliable": "30501",
                     "eventgroups": ["0x0001"]}],
    }
    path = os.path.join(tmp, "client_a.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    log = os.path.join(tmp, "node_a.log")
    sdp = SdPeer()
    svc = udp_socket(30509)
    proc = start_node(path, 4, log)
    offer = SDEntry_Service(type=0x01, srv_id=0x4444, inst_id=1, major_ver=1, ttl=3, minor_ver=0,
                            index_1=0, n_opt_1=1)
    offer_opt = SDOption_IP4_EndPoint(addr=PEER_IP, l4_proto=0x11, port=30509)
    subscribe = None
    subscriber_ep = None
    finds = []
    sent_events = []
    next_offer = 0.0
    next_event = 0.0
    start = time.monotonic()
    seq = 0
    while time.monotonic() - start < 3.0:
        now = time.monotonic()
        if now >= next_offer:
            sdp.send([offer], [offer_opt], (SD_GROUP, SD_PORT))
            next_offer = now + 0.3
        if subscriber_ep and now >= next_event and len(sent_events) < 15:
            seq += 1
            payload = b"scapy-event-%02d" % seq
            ev = SOMEIP(srv_id=0x4444, sub_id=1, event_id=0x0001, client_id=0, session_id=seq, iface_ver=1,
                        msg_type=SOMEIP.TYPE_NOTIFICATION) / payload
            svc.sendto(raw(ev), subscriber_ep)
            sent_events.append(payload)
            next_event = now + 0.1
        for e, opts, src, dst, _ in sdp.entries_from(0.05):
            if e.type == 0x00:
                finds.append(e)
            if e.type == 0x06 and e.ttl > 0 and subscribe is None:
                subscribe = (e, opts, src)
                ep = endpoint_ok(opts, NODE_IP)
                if ep is not None:
                    subscriber_ep = (NODE_IP, ep.port)
                ack = SDEntry_EventGroup(type=0x07, srv_id=e.srv_id, inst_id=e.inst_id, major_ver=e.major_ver,
                                         ttl=e.ttl, cnt=e.cnt, eventgroup_id=e.eventgroup_id)
                sdp.send([ack], [], src)
    lines = node_lines(proc, log)
    if check("(a) node sent SubscribeEventgroup", subscribe is not None):
        e, opts, src = subscribe
        check("(a) subscribe entry fields (service, instance, eventgroup, TTL, reserved)",
              (e.srv_id, e.inst_id, e.eventgroup_id, e.ttl, e.res) == (0x4444, 1, 1, 3, 0),
              e.show(dump=True))
        check("(a) subscribe carries our IPv4/UDP endpoint 10.77.0.1:30501",
              endpoint_ok(opts, NODE_IP, 30501) is not None, [o.show(dump=True) for o in opts])
        check("(a) subscribe sent from the SD port by unicast", src == (NODE_IP, SD_PORT), src)
    for f in finds:
        check("(a) node's FindService is well-formed",
              f.srv_id == 0x4444 and f.inst_id == 1 and f.ttl > 0, f.show(dump=True))
        break
    avail = [x for x in lines if x.get("type") == "availability" and x["service"] == 0x4444]
    check("(a) node reported the service available", any(x["available"] for x in avail), avail)
    events = [x for x in lines if x.get("type") == "event" and x["service"] == 0x4444]
    got = [bytes.fromhex(x["payload"]) for x in events]
    check(f"(a) node printed every notification scapy sent ({len(sent_events)})",
          len(sent_events) >= 10 and got == sent_events, (len(got), len(sent_events)))
    check("(a) notification fields (event 0x8001, unicast, source 10.77.0.2:30509)",
          all(x["event"] == 0x8001 and not x["multicast"] and x["source"] == f"{PEER_IP}:30509/udp" for x in events),
          events[:2])
    sdp.sock.close()
    svc.close()


# ---- (b) + (c) our node offers; scapy finds, subscribes and calls -----------------------

def scenario_bc(tmp):
    print("--- (b) layersec node offers 0x1234/1; scapy finds and subscribes; (c) scapy calls")
    log = os.path.join(tmp, "node_b.log")
    sdp = SdPeer()
    app = udp_socket(40000)
    proc = start_node(os.path.join(EXAMPLES, "echo_server.json"), 5, log)

    # The node's multicast Offer.
    offer = None
    for e, opts, src, dst, p in sdp.entries_from(2.0):
        if e.type == 0x01 and e.srv_id == 0x1234 and e.ttl > 0:
            offer = (e, opts, src, dst, p)
            break
    if check("(b) node multicasts OfferService", offer is not None):
        e, opts, src, dst, p = offer
        check("(b) offer entry fields (instance 1, major 1, minor 0, TTL 3)",
              (e.inst_id, e.major_ver, e.minor_ver, e.ttl) == (1, 1, 0, 3), e.show(dump=True))
        check("(b) offer carries IPv4/UDP endpoint 10.77.0.1:30509",
              endpoint_ok(opts, NODE_IP, 30509) is not None, [o.show(dump=True) for o in opts])
        check("(b) offer sent to the SD group from the SD port", dst == SD_GROUP and src == (NODE_IP, SD_PORT),
              (src, dst))
        check("(b) SD header: reboot + unicast flags, session >= 1",
              p[SD].get_flag("REBOOT") == 1 and p[SD].get_flag("UNICAST") == 1 and p.session_id >= 1,
              p.show(dump=True))

    # FindService -> an Offer answers it.
    find = SDEntry_Service(type=0x00, srv_id=0x1234, inst_id=0xFFFF, major_ver=0xFF, ttl=3, minor_ver=0xFFFFFFFF)
    sdp.send([find], [], (NODE_IP, SD_PORT))
    answered = None
    for e, opts, src, dst, _ in sdp.entries_from(0.6):
        if e.type == 0x01 and e.srv_id == 0x1234 and e.ttl > 0:
            answered = dst
            break
    check("(b) FindService answered with an Offer", answered is not None)
    print(f"     (answer went to {answered}: unicast when the last multicast offer is recent, as the spec says)")

    # SubscribeEventgroup -> Ack, then notifications.
    sub = SDEntry_EventGroup(type=0x06, srv_id=0x1234, inst_id=1, major_ver=1, ttl=3, cnt=0, eventgroup_id=1,
                             index_1=0, n_opt_1=1)
    sdp.send([sub], [SDOption_IP4_EndPoint(addr=PEER_IP, l4_proto=0x11, port=40000)], (NODE_IP, SD_PORT))
    ack = None
    for e, opts, src, dst, _ in sdp.entries_from(1.0):
        if e.type == 0x07 and e.srv_id == 0x1234:
            ack = (e, dst)
            break
    if check("(b) SubscribeEventgroup acknowledged", ack is not None):
        e, dst = ack
        check("(b) ack fields (instance 1, eventgroup 1, TTL copied, counter copied, by unicast)",
              (e.inst_id, e.eventgroup_id, e.ttl, e.cnt, dst) == (1, 1, 3, 0, PEER_IP),
              (e.show(dump=True), dst))

    notes = {}
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        got = recv(app, end - time.monotonic())
        if got is None:
            break
        data, src, _ = got
        p = SOMEIP(data)
        if p.msg_type == SOMEIP.TYPE_NOTIFICATION and p.srv_id == 0x1234 and p.sub_id == 1:
            notes.setdefault(0x8000 | p.event_id, []).append((p, src))
    ev = notes.get(0x8001, [])
    check("(b) notifications of event 0x8001 arrive (>= 5 in 1.5 s at 100 ms)", len(ev) >= 5, len(ev))
    check("(b) notification header (proto 1, interface 1, E_OK, client 0, 16-byte payload, from 10.77.0.1:30509)",
          ev and all(p.proto_ver == 1 and p.iface_ver == 1 and p.retcode == 0 and p.client_id == 0
                     and len(raw(p.payload)) == 16 and src == (NODE_IP, 30509) for p, src in ev),
          ev[:1] and ev[0][0].show(dump=True))
    seqs = [struct.unpack(">I", raw(p.payload)[:4])[0] for p, _ in ev]
    check("(b) event sequence numbers increase by one", seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else False,
          seqs)
    check("(b) field 0x8002: initial value sent to the new subscriber", len(notes.get(0x8002, [])) >= 1,
          sorted(notes))

    # (c) requests.
    req = SOMEIP(srv_id=0x1234, sub_id=0, method_id=0x0001, client_id=0x7777, session_id=0x0042, iface_ver=1,
                 msg_type=SOMEIP.TYPE_REQUEST) / b"hello from scapy"
    bad = SOMEIP(srv_id=0x1234, sub_id=0, method_id=0x0099, client_id=0x7777, session_id=0x0043, iface_ver=1,
                 msg_type=SOMEIP.TYPE_REQUEST)  # no payload: scapy's answers() compares payloads
    app.sendto(raw(req), (NODE_IP, 30509))
    app.sendto(raw(bad), (NODE_IP, 30509))
    answers = {}
    end = time.monotonic() + 1.0
    while time.monotonic() < end and len(answers) < 2:
        got = recv(app, end - time.monotonic())
        if got is None:
            break
        p = SOMEIP(got[0])
        if p.msg_type in (SOMEIP.TYPE_RESPONSE, SOMEIP.TYPE_ERROR):
            answers[p.session_id] = p
    r = answers.get(0x42)
    if check("(c) echo request answered", r is not None, sorted(answers)):
        check("(c) RESPONSE, E_OK, same ids, payload echoed, scapy answers() agrees",
              r.msg_type == SOMEIP.TYPE_RESPONSE and r.retcode == 0 and r.client_id == 0x7777
              and r.srv_id == 0x1234 and r.method_id == 1 and r.iface_ver == 1 and raw(r.payload) == b"hello from scapy" and r.answers(req),
              r.show(dump=True))
    e = answers.get(0x43)
    check("(c) unknown method -> ERROR E_UNKNOWN_METHOD answering the request",
          e is not None and e.msg_type == SOMEIP.TYPE_ERROR and e.retcode == SOMEIP.RET_E_UNKNOWN_METHOD
          and (e.srv_id, e.method_id, e.client_id) == (0x1234, 0x0099, 0x7777) and e.answers(bad),
          e and e.show(dump=True))

    lines = node_lines(proc, log)
    served = [x for x in lines if x.get("type") == "request" and x["client"] == 0x7777]
    check("(c) node printed the served request", len(served) == 1 and served[0]["size"] == 16
          and served[0]["source"] == f"{PEER_IP}:40000/udp", served)
    counters = [x for x in lines if x.get("type") == "counters"]
    check("(c) node counted the unknown method", counters and
          counters[-1]["runtime"]["errors_sent"].get("E_UNKNOWN_METHOD", 0) >= 1, counters[-1:])
    sdp.sock.close()
    app.close()


with tempfile.TemporaryDirectory() as tmp:
    scenario_a(tmp)
    scenario_bc(tmp)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
