#!/usr/bin/python3
"""Watches, records and replays frames on a veth for the namespace tests in
tests/cli/ (raw AF_PACKET, no scapy; not a test itself).

  wire.py log IFACE OUT
      Until SIGTERM: one line per frame seen on IFACE (both directions, before
      any ingress filter): "T SRC ETHERTYPE AN LEN", T CLOCK_MONOTONIC s, SRC
      12 hex digits, ETHERTYPE 4, AN the SecTAG's AN of a MACsec frame (else
      -), LEN octets.
  wire.py record IFACE SRC SECONDS OUT
      The MACsec frames (88e5) from SRC for SECONDS, to OUT (2-octet length,
      frame); prints how many.
  wire.py replay IFACE FILE
      Sends the recorded frames on IFACE; prints how many.
  wire.py types LOG SRC...
      "ETHERTYPE:COUNT ..." of the frames from any SRC in a log.
  wire.py rekey_gap LOG SRC AFTER
      SRC's MACsec frames in LOG: the first change of AN after AFTER (a
      monotonic time) is the SAK switch. Syncs are SRC's shortest MACsec
      frames (44-octet messages). Prints JSON: old and new AN, the switch
      time, the gap between the last Sync under the old AN and the first
      under the new one, the largest gap between Syncs and between any two
      frames within 2 s of the switch (ms), and how many frames there were.
"""
import json
import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003


def log(iface, out):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.2)
    done = []
    signal.signal(signal.SIGTERM, lambda *_: done.append(1))
    with open(out, "w", buffering=1) as f:
        while not done:
            try:
                frame = s.recv(65535)
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            t = time.monotonic()
            etype = frame[12:14].hex()
            an = str(frame[14] & 0x03) if etype == "88e5" and len(frame) > 14 else "-"
            f.write("%.6f %s %s %s %d\n" % (t, frame[6:12].hex(), etype, an, len(frame)))


def record(iface, src, seconds, out):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88E5))
    s.bind((iface, 0))
    s.settimeout(0.2)
    frames = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            frame = s.recv(65535)
        except socket.timeout:
            continue
        if frame[6:12].hex() == src:
            frames.append(frame)
    with open(out, "wb") as f:
        for frame in frames:
            f.write(len(frame).to_bytes(2, "big") + frame)
    print(len(frames))


def replay(iface, path):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    data = open(path, "rb").read()
    i = n = 0
    while i < len(data):
        length = int.from_bytes(data[i:i + 2], "big")
        s.send(data[i + 2:i + 2 + length])
        i += 2 + length
        n += 1
    print(n)


def rows(path):
    out = []
    for line in open(path):
        parts = line.split()
        if len(parts) == 5:
            out.append((float(parts[0]), parts[1], parts[2], parts[3], int(parts[4])))
    return out


def types(path, srcs):
    counts = {}
    for _, src, etype, _, _ in rows(path):
        if src in srcs:
            counts[etype] = counts.get(etype, 0) + 1
    print(" ".join("%s:%d" % kv for kv in sorted(counts.items())))


def largest_gap(times):
    return max((b - a for a, b in zip(times, times[1:])), default=None)


def rekey_gap(path, src, after):
    mine = [r for r in rows(path) if r[1] == src and r[2] == "88e5"]
    sync_len = min(r[4] for r in mine)
    switch = None
    for prev, cur in zip(mine, mine[1:]):
        if cur[0] > after and cur[3] != prev[3]:
            switch = (prev[3], cur[3], cur[0])
            break
    if switch is None:
        print(json.dumps({"switch": None, "frames": len(mine)}))
        return
    old, new, t = switch
    syncs = [r for r in mine if r[4] == sync_len]
    last_old = max(r[0] for r in syncs if r[3] == old and r[0] < t)
    first_new = min(r[0] for r in syncs if r[3] == new and r[0] >= t)
    window = [r for r in mine if t - 2 <= r[0] <= t + 2]
    ms = lambda x: None if x is None else round(x * 1000, 1)
    print(json.dumps({
        "old_an": int(old), "new_an": int(new), "switch_t": t,
        "sync_gap_across_switch_ms": ms(first_new - last_old),
        "largest_sync_gap_ms": ms(largest_gap([r[0] for r in window if r[4] == sync_len])),
        "largest_frame_gap_ms": ms(largest_gap([r[0] for r in window])),
        "syncs_in_window": sum(1 for r in window if r[4] == sync_len),
        "frames_in_window": len(window)}))


def main(argv):
    mode = argv[1]
    if mode == "log":
        log(argv[2], argv[3])
    elif mode == "record":
        record(argv[2], argv[3], float(argv[4]), argv[5])
    elif mode == "replay":
        replay(argv[2], argv[3])
    elif mode == "types":
        types(argv[2], set(argv[3:]))
    elif mode == "rekey_gap":
        rekey_gap(argv[2], argv[3], float(argv[4]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
