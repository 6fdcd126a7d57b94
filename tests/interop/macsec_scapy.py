#!/usr/bin/python3
"""Interop of layersec's MACsec SecY with independent implementations.

usage: macsec_scapy.py /path/to/layersec

1. Frames protected by `layersec macsec protect` decrypt and verify in scapy's
   MACsec layer (scapy.contrib.macsec.MACsecSA), for GCM-AES-128/256 and
   GCM-AES-XPN-128/256, confidentiality (offset 0, 30, 50) and integrity only,
   with an explicit SCI and with the implicit end-station SCI (ES=1, SC=0).
2. Frames protected by scapy validate in `layersec macsec validate` and give
   back the exact original frame. scapy never sets ES and takes the SCI only
   as an IV input, so for SC=0 frames the ES bit is set by hand before
   encryption and the SCI passed is SA || 0001.
3. Clear-tag VLAN mode (not supported by scapy's encap) is checked against
   python-cryptography's AESGCM directly: AAD = DA SA SecTAG (tags not
   covered, the default) or DA SA tags SecTAG (--clear-tags-in-icv).
4. tshark dissects frames we wrote to a pcap with the expected TCI, AN, SL, PN
   and SCI.
5. Key files readable by group/others are refused.
Exits non-zero on the first mismatch.
"""
import os
import stat
import struct
import subprocess
import sys
import tempfile

from scapy.all import Ether, IP, UDP, Raw, Dot1Q, raw  # noqa: E402
from scapy.contrib.macsec import MACsecSA, MACsec  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402

LAYERSEC = sys.argv[1]
SUITES = {
    "GCM-AES-128": (16, False),
    "GCM-AES-256": (32, False),
    "GCM-AES-XPN-128": (16, True),
    "GCM-AES-XPN-256": (32, True),
}
SRC = "02:11:22:33:44:55"
DST = "01:80:c2:00:00:10"
SCI_EXPLICIT = bytes.fromhex("0211223344550007")
SCI_ES = bytes.fromhex("0211223344550001")  # SA || 0001
SSCI = 0x7A30C118
SALT = bytes.fromhex("E630E81A48DE86A21C66FA6D")
checks = 0
checks_note = []


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        fail(msg)


def key_file(tmp, key, mode=0o600):
    path = os.path.join(tmp, "sak-%s-%o" % (key[:2].hex(), mode))
    with open(path, "w") as f:
        f.write(key.hex() + "\n")
    os.chmod(path, mode)
    return path


def run(args, expect_rc=0):
    p = subprocess.run([LAYERSEC, "macsec"] + args, capture_output=True, text=True)
    if p.returncode != expect_rc:
        fail("layersec %s -> rc %d\nstdout %s\nstderr %s" % (" ".join(args[:6]), p.returncode,
                                                             p.stdout, p.stderr))
    return p


def frames(n_payloads):
    out = []
    for i, n in enumerate(n_payloads):
        payload = bytes((j * 7 + i) & 0xFF for j in range(n))
        out.append(Ether(src=SRC, dst=DST) / IP(src="10.0.0.1", dst="10.0.0.2") /
                   UDP(sport=30490 + i, dport=30490) / Raw(payload))
    return out


def common_args(suite, kf, conf, offset, an):
    args = ["--suite", suite, "--key-file", kf, "--an", str(an),
            "--ssci", "%08x" % SSCI, "--salt", SALT.hex()]
    if not conf:
        args.append("--integrity")
    if offset:
        args += ["--offset", str(offset)]
    return args


def scapy_sa(suite, key, an, pn, conf, send_sci, sci):
    _, xpn = SUITES[suite]
    if xpn:
        return MACsecSA(sci=sci, an=an, pn=pn, key=key, icvlen=16, encrypt=conf,
                        send_sci=send_sci, xpn_en=True, ssci=SSCI, salt=SALT)
    return MACsecSA(sci=sci, an=an, pn=pn, key=key, icvlen=16, encrypt=conf, send_sci=send_sci)


def assoclen(send_sci, offset):
    return 20 + (8 if send_sci else 0) + offset


def ours_to_scapy(tmp, suite, conf, offset, send_sci):
    klen, xpn = SUITES[suite]
    key = bytes((0x40 + 3 * i) & 0xFF for i in range(klen))
    kf = key_file(tmp, key)
    sci = SCI_EXPLICIT if send_sci else SCI_ES
    an = 1
    pn = 0xB0DF459C00000010 if xpn else 0x10
    plain = frames([0, 18, 100, 1400])
    args = ["protect"] + common_args(suite, kf, conf, offset, an) + ["--sci", sci.hex(), "--pn", str(pn)]
    if not send_sci:
        args += ["--no-sci", "--es"]
    for p in plain:
        args += ["--hex", raw(p).hex()]
    out = run(args).stdout.split()
    check(len(out) == len(plain), "one secure frame per input")
    for i, (p, hx) in enumerate(zip(plain, out)):
        secure = Ether(bytes.fromhex(hx))
        check(secure.type == 0x88E5 and isinstance(secure.payload, MACsec), "MACsec EtherType")
        m = secure[MACsec]
        check(m.PN == (pn + i) & 0xFFFFFFFF and m.AN == an, "PN/AN in SecTAG")
        check(m.SC == (1 if send_sci else 0) and m.ES == (0 if send_sci else 1), "SC/ES bits")
        check(m.E == (1 if conf else 0) and m.C == (1 if conf else 0), "E/C bits")
        sa = scapy_sa(suite, key, an, pn + i, conf, send_sci, sci)
        msdu = len(raw(p)) - 12
        if conf and offset and msdu < offset:
            # Shorter than the offset: all User Data is in clear and in the
            # AAD (802.1AE 10.5.2). scapy's split_pkt cannot express that
            # (its AAD would run into the ICV), so check with AESGCM directly.
            sec = bytes.fromhex(hx)
            hdr = assoclen(send_sci, 0)
            check(sec[hdr:-16] == raw(p)[12:], "short frame: User Data in clear")
            AESGCM(key).decrypt(sa.make_iv(secure), sec[-16:], sec[:-16])
            checks_note.append(1)
            continue
        try:
            dec = sa.decrypt(secure, assoclen=assoclen(send_sci, offset) if conf else None)
        except Exception as e:  # InvalidTag
            fail("scapy could not verify our %s frame (conf=%s offset=%d sci=%s): %r" %
                 (suite, conf, offset, send_sci, e))
        back = sa.decap(dec)
        check(raw(back) == raw(p), "scapy decrypts our %s frame to the original" % suite)


def scapy_to_ours(tmp, suite, conf, offset, send_sci):
    klen, xpn = SUITES[suite]
    key = bytes((0x90 + 5 * i) & 0xFF for i in range(klen))
    kf = key_file(tmp, key)
    sci = SCI_EXPLICIT if send_sci else SCI_ES
    an = 3
    base = 0x00000002FFFFFFF0 if xpn else 0x7FFFFFF0
    plain = frames([1, 30, 200, 1300])
    hexes = []
    for i, p in enumerate(plain):
        sa = scapy_sa(suite, key, an, base + i, conf, send_sci, sci)
        enc = sa.encap(p)
        if not send_sci:
            enc[MACsec].ES = 1  # scapy never sets ES; the SCI is implicit SA || 0001
        enc = sa.encrypt(enc, assoclen=assoclen(send_sci, offset) if conf else None)
        hexes.append(raw(enc).hex())
    args = ["validate"] + common_args(suite, kf, conf, offset, an) + \
        ["--sci", sci.hex(), "--pn", str(base)]
    for h in hexes:
        args += ["--hex", h]
    lines = run(args).stdout.strip().split("\n")
    check(len(lines) == len(plain), "one verdict per frame")
    for i, (p, line) in enumerate(zip(plain, lines)):
        f = line.split()
        check(f[0] == "verified", "layersec verifies scapy's %s frame: %s" % (suite, line))
        check(f[1] == raw(p).hex(), "layersec recovers scapy's original frame")
        check(int(f[3]) == base + i, "recovered PN %s == %d" % (f[3], base + i))
    # A frame scapy protected with a flipped ciphertext/data bit is dropped.
    bad = bytearray(bytes.fromhex(hexes[1]))
    bad[-20] ^= 1
    r = run(["validate"] + common_args(suite, kf, conf, offset, an) +
            ["--sci", sci.hex(), "--pn", str(base), "--hex", bad.hex()], expect_rc=2)
    check(r.stdout.startswith("dropped InPktsNotValid"), "tampered frame: %s" % r.stdout)


def clear_tag_mode(tmp):
    key = bytes(range(16))
    kf = key_file(tmp, key)
    inner = Ether(src=SRC, dst=DST) / Dot1Q(prio=5, vlan=100) / IP(src="10.0.0.1", dst="10.0.0.2") / \
        UDP(sport=1, dport=2) / Raw(b"tsn" * 30)
    frame = raw(inner)
    for covered in (False, True):
        for conf in (True, False):
            args = ["protect", "--suite", "GCM-AES-128", "--key-file", kf, "--sci",
                    SCI_EXPLICIT.hex(), "--pn", "77", "--clear-tags", "--hex", frame.hex()]
            if covered:
                args.append("--clear-tags-in-icv")
            if not conf:
                args.append("--integrity")
            sec = bytes.fromhex(run(args).stdout.strip())
            check(sec[12:16] == frame[12:16], "VLAN tag in clear after SA")
            check(sec[14] >> 5 == 5, "PCP readable in clear")
            check(sec[16:18] == b"\x88\xe5", "SecTAG after the clear tag")
            sectag = sec[16:32]
            data, icv = sec[32:-16], sec[-16:]
            iv = SCI_EXPLICIT + struct.pack("!I", 77)
            aad = sec[:12] + (sec[12:16] if covered else b"") + sectag
            if conf:
                pt = AESGCM(key).decrypt(iv, data + icv, aad)
            else:
                AESGCM(key).decrypt(iv, icv, aad + data)
                pt = data
            check(sec[:16] + pt == frame, "clear-tag frame decrypts independently")
            # validate through layersec too
            v = ["validate", "--suite", "GCM-AES-128", "--key-file", kf, "--sci", SCI_EXPLICIT.hex(),
                 "--pn", "1", "--clear-tags", "--hex", sec.hex()]
            if covered:
                v.append("--clear-tags-in-icv")
            if not conf:
                v.append("--integrity")
            out = run(v).stdout.split()
            check(out[0] == "verified" and out[1] == frame.hex(), "layersec validates clear-tag frame")


def tshark_dissects(tmp):
    key = bytes(range(32))
    kf = key_file(tmp, key)
    pcap = os.path.join(tmp, "ours.pcap")
    plain = frames([10, 60])
    args = ["protect", "--suite", "GCM-AES-256", "--key-file", kf, "--sci", "0211223344550007",
            "--an", "2", "--pn", "4660", "--pcap", pcap]
    for p in plain:
        args += ["--hex", raw(p).hex()]
    run(args)
    pcap2 = os.path.join(tmp, "ours_es.pcap")
    args = ["protect", "--suite", "GCM-AES-128", "--key-file", key_file(tmp, key[:16]), "--no-sci",
            "--es", "--sci", SCI_ES.hex(), "--an", "1", "--pn", "9", "--integrity", "--pcap", pcap2,
            "--hex", raw(plain[0]).hex()]
    run(args)
    fields = ["macsec.TCI", "macsec.AN", "macsec.SL", "macsec.PN", "macsec.SCI.system_identifier",
              "macsec.SCI.port_identifier", "macsec.TCI.ES", "macsec.TCI.SC", "macsec.TCI.E",
              "macsec.TCI.C"]
    cmd = ["tshark", "-r", pcap, "-T", "fields", "-E", "separator=|"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().split("\n")
    check(len(out) == 2, "tshark reads two frames")
    # frame 1: 10-octet UDP payload -> MSDU 2+20+8+10 = 40 < 48: SL 40
    exp = [("0x2e", "2", "40", "4660"), ("0x2e", "2", "0", "4661")]
    for line, (tci, an, sl, pn) in zip(out, exp):
        v = line.split("|")
        # tshark's macsec.TCI is the 6-bit TCI (octet >> 2), macsec.AN the 2 low bits
        check(int(v[0], 0) == int(tci, 0) >> 2 and int(v[1], 0) == int(an) and v[2] == sl
              and v[3] == pn,
              "tshark TCI/AN/SL/PN: %s" % line)
        check(v[4] == SRC and int(v[5], 0) == 7, "tshark SCI: %s" % line)
        check(v[7] in ("1", "True") and v[8] in ("1", "True") and v[9] in ("1", "True"),
              "tshark SC/E/C: %s" % line)
    cmd = ["tshark", "-r", pcap2, "-T", "fields", "-E", "separator=|"]
    for f in fields:
        cmd += ["-e", f]
    line = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    v = line.split("|")
    check(int(v[0], 0) == 0x41 >> 2 and int(v[1], 0) == 1 and v[3] == "9",
          "tshark ES frame: %s" % line)
    check(v[4] == "" and v[6] in ("1", "True") and v[7] in ("0", "False"), "no SCI, ES set: %s" % line)
    # tshark -V shows the 802.1AE tree
    verbose = subprocess.run(["tshark", "-r", pcap, "-V", "-c", "1"], capture_output=True,
                             text=True, check=True).stdout
    check("802.1AE Security tag" in verbose, "tshark -V shows the SecTAG")


def key_modes(tmp):
    key = bytes(16)
    for mode, ok in ((0o600, True), (0o400, True), (0o640, False), (0o644, False), (0o666, False)):
        kf = key_file(tmp, key, mode)
        p = subprocess.run([LAYERSEC, "macsec", "protect", "--suite", "GCM-AES-128", "--key-file", kf,
                            "--hex", raw(frames([5])[0]).hex()], capture_output=True, text=True)
        check((p.returncode == 0) == ok, "key file mode %o accepted=%s (rc %d)" % (mode, ok, p.returncode))
        check(key.hex() not in p.stdout + p.stderr, "key never printed")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for suite in SUITES:
            for conf, offset in ((True, 0), (True, 30), (True, 50), (False, 0)):
                for send_sci in (True, False):
                    ours_to_scapy(tmp, suite, conf, offset, send_sci)
                    scapy_to_ours(tmp, suite, conf, offset, send_sci)
        clear_tag_mode(tmp)
        tshark_dissects(tmp)
        key_modes(tmp)
    print("macsec interop: %d checks passed, %d short-offset frames via AESGCM (scapy both directions for 4 suites incl. XPN, "
          "clear-tag AAD via python-cryptography, tshark dissection, key file modes)" % (checks, len(checks_note)))


if __name__ == "__main__":
    main()
