"""Helpers of tests/cli/mka_wpas_interop.sh (wpa_supplicant 2.10 as an MKA peer
of `layersec macsec up --mka`). Nothing here prints a key: SAKs appear as
fingerprints (the first 16 hex digits of SHA-256, as mka::fingerprint).

  saks SHIMLOG CMD             one line per CMD (ADD_TXSA or ADD_RXSA) the shim
                               logged: "an fingerprint [rx-sci]", in order
  wpas-mi WPASLOG              the MI wpa_supplicant drew last ("Selected random MI")
  wpas-live WPASLOG            the MIs wpa_supplicant moved to its live peer list
  decrypt PCAP SHIMLOG SCI MARKER
                               decrypts every MACsec frame of SCI in PCAP with the
                               receive SAKs wpa_supplicant installed for SCI (scapy
                               MACsecSA, GCM-AES-128/256); prints "frames N
                               decrypted D marked M": D frames verified, M carry MARKER
  mka PCAP                     MKPDUs as tshark dissects them: "sci actor_mi
                               peer_mis cak_name" per frame
  capture IFACE PCAP SECONDS   writes every EAPOL (888e) and MACsec (88e5) frame on
                               IFACE, both directions, to a classic pcap file for SECONDS (AF_PACKET;
                               run it inside the namespace; flushed per frame)

The shim's log lines are JSON-like with trailing commas; they are read with
regular expressions.
"""
import hashlib
import re
import subprocess
import sys


def fingerprint(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[:16]


LINE = re.compile(r'"cmd":"(?P<cmd>[A-Z_]+)"')
RXSCI = re.compile(r'"a2":\{"n1":"(?P<sci>[0-9a-f]{16})"')
SA = re.compile(r'"a3":\{(?P<body>[^}]*)\}')
ATTR = re.compile(r'"(?P<k>n\d)":"(?P<v>[0-9a-f]*)"')


def shim_sas(path, cmd):
    """(an, key bytes, rx sci or None) per `cmd` line of the shim log."""
    out = []
    for line in open(path, errors="replace"):
        m = LINE.search(line)
        if not m or m.group("cmd") != cmd:
            continue
        sa = SA.search(line)
        if not sa:
            continue
        attrs = {a.group("k"): a.group("v") for a in ATTR.finditer(sa.group("body"))}
        if "n4" not in attrs:
            continue
        sci = RXSCI.search(line)
        out.append((int(attrs.get("n1", "00"), 16), bytes.fromhex(attrs["n4"]), sci.group("sci") if sci else None))
    return out


def cmd_saks(shimlog, cmd):
    for an, key, sci in shim_sas(shimlog, cmd):
        print(an, fingerprint(key), sci or "-")


def cmd_wpas_mi(wpaslog):
    mi = ""
    for line in open(wpaslog, errors="replace"):
        m = re.search(r"Selected random MI: ([0-9a-f]{24})", line)
        if m:
            mi = m.group(1)
    print(mi)


def cmd_wpas_live(wpaslog):
    lines = open(wpaslog, errors="replace").read().splitlines()
    seen = []
    for i, line in enumerate(lines):
        if "Move potential peer to live peer" in line and i + 1 < len(lines):
            m = re.search(r"MI: ([0-9a-f]{24})", lines[i + 1])
            if m and m.group(1) not in seen:
                seen.append(m.group(1))
    print(" ".join(seen))


def cmd_decrypt(pcap, shimlog, sci_hex, marker):
    from scapy.all import rdpcap  # noqa: E402 (scapy only where it is needed)
    from scapy.contrib.macsec import MACsec, MACsecSA  # noqa: E402

    keys = [(an, key) for an, key, sci in shim_sas(shimlog, "ADD_RXSA") if sci == sci_hex]
    sci = bytes.fromhex(sci_hex)
    frames = decrypted = marked = 0
    for pkt in rdpcap(pcap):
        if MACsec not in pkt or not pkt[MACsec].SC or bytes(pkt[MACsec].sci) != sci:
            continue
        frames += 1
        an, pn = pkt[MACsec].an, pkt[MACsec].pn
        for k_an, key in reversed(keys):  # the latest SAK for that AN first
            if k_an != an:
                continue
            sa = MACsecSA(sci=sci, an=an, pn=pn, key=key, icvlen=16, encrypt=1, send_sci=1)
            try:
                plain = sa.decrypt(pkt)
            except Exception:  # InvalidTag: not this key
                continue
            decrypted += 1
            if marker.encode() in bytes(plain):
                marked += 1
            break
    print("frames %d decrypted %d marked %d" % (frames, decrypted, marked))


def cmd_mka(pcap):
    out = subprocess.run(["tshark", "-r", pcap, "-Y", "mka", "-T", "fields", "-E", "separator=|",
                          "-e", "mka.sci", "-e", "mka.actor_mi", "-e", "mka.peer_mi", "-e", "mka.cak_name"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        sci, mi, peers, ckn = (line.split("|") + ["", "", "", ""])[:4]
        print(sci.replace(":", "").lower() or "-", mi.replace(":", "").lower() or "-",
              peers.replace(":", "").lower() or "-", ckn.replace(":", "").lower() or "-")


def cmd_capture(iface, path, seconds):
    import socket
    import struct
    import time

    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((iface, 0))
    s.settimeout(0.1)
    end = time.time() + float(seconds)
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        out.flush()
        while time.time() < end:
            try:
                frame, addr = s.recvfrom(65535)
            except socket.timeout:
                continue
            if frame[12:14] not in (b"\x88\x8e", b"\x88\xe5"):
                continue
            t = time.time()
            out.write(struct.pack("<IIII", int(t), int((t % 1) * 1e6), len(frame), len(frame)) + frame)
            out.flush()


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "saks":
        cmd_saks(args[0], args[1])
    elif cmd == "wpas-mi":
        cmd_wpas_mi(args[0])
    elif cmd == "wpas-live":
        cmd_wpas_live(args[0])
    elif cmd == "decrypt":
        cmd_decrypt(*args)
    elif cmd == "mka":
        cmd_mka(args[0])
    elif cmd == "capture":
        cmd_capture(*args)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
