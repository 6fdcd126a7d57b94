#!/usr/bin/python3
"""Independent pure-Python Chaskey / Chaskey-12, written from the published
description (Mouha et al., "Chaskey: An Efficient MAC Algorithm for 32-bit
Microcontrollers", SAC 2014, Alg. 1 and Fig. 2; Mouha, ePrint 2015/1182 for
the 12-round variant), not from layersec's C++.

  * The 128-bit key K and every 16-byte message block are read as integers
    in little-endian byte order (four little-endian 32-bit words v0..v3).
  * Subkeys: K1 = x*K, K2 = x*K1 in GF(2^128) modulo x^128+x^7+x^2+x+1
    (a left shift of the integer with conditional xor of 0x87).
  * v = K; for every block but the last: v = pi(v ^ m_i).
    Last block: a complete block uses K1; an incomplete one (or the empty
    message) is padded with 0x01 then zeros and uses K2.
    v = pi(v ^ m_last ^ Kx) ^ Kx; the tag is the first t bytes of v.
  * pi: `rounds` applications of the ARX round of Fig. 2.

Usage:
  chaskey_ref.py --self-test VECTORS.json   check against the published sets
  chaskey_ref.py --gen N [--seed S]         N random cases per round count as
                                            "<rounds> <key> <msg|-> <tag>" lines
"""
import argparse
import json
import random
import sys

MASK32 = 0xFFFFFFFF
MASK128 = (1 << 128) - 1


def rotl(x, b):
    return ((x << b) | (x >> (32 - b))) & MASK32


def permute(v, rounds):
    v0, v1, v2, v3 = v
    for _ in range(rounds):
        v0 = (v0 + v1) & MASK32
        v1 = rotl(v1, 5) ^ v0
        v0 = rotl(v0, 16)
        v2 = (v2 + v3) & MASK32
        v3 = rotl(v3, 8) ^ v2
        v0 = (v0 + v3) & MASK32
        v3 = rotl(v3, 13) ^ v0
        v2 = (v2 + v1) & MASK32
        v1 = rotl(v1, 7) ^ v2
        v2 = rotl(v2, 16)
    return [v0, v1, v2, v3]


def to_words(x):
    return [(x >> (32 * i)) & MASK32 for i in range(4)]


def from_words(w):
    return sum(w[i] << (32 * i) for i in range(4))


def times_x(k):
    k <<= 1
    if k >> 128:
        k = (k & MASK128) ^ 0x87
    return k


def chaskey(key, msg, rounds, tag_len=16):
    assert len(key) == 16 and 1 <= tag_len <= 16 and rounds in (8, 12)
    k = int.from_bytes(key, "little")
    k1 = times_x(k)
    k2 = times_x(k1)
    blocks = [msg[i:i + 16] for i in range(0, len(msg), 16)] or [b""]
    v = k
    for b in blocks[:-1]:
        v = from_words(permute(to_words(v ^ int.from_bytes(b, "little")), rounds))
    last = blocks[-1]
    if len(last) == 16:
        kx = k1
    else:
        last = last + b"\x01" + b"\x00" * (15 - len(last))
        kx = k2
    v = from_words(permute(to_words(v ^ int.from_bytes(last, "little") ^ kx), rounds)) ^ kx
    return v.to_bytes(16, "little")[:tag_len]


def self_test(path):
    with open(path) as f:
        doc = json.load(f)
    n = 0
    for s in doc["sets"]:
        key = bytes.fromhex(s["key_hex"])
        for v in s["vectors"]:
            tag = bytes.fromhex(v["tag_hex"])
            got = chaskey(key, bytes.fromhex(v["message_hex"]), s["rounds"], len(tag))
            if got != tag:
                print("chaskey_ref: MISMATCH in %s len %d" % (s["id"], v["msg_len"]), file=sys.stderr)
                return 1
            n += 1
    print("chaskey_ref: %d published vectors reproduced" % n)
    return 0 if n > 0 else 1


def generate(count, seed):
    rng = random.Random(seed)
    lengths = list(range(0, 50)) + [63, 64, 65, 95, 96, 97, 127, 128, 129, 255, 256, 257]
    for rounds in (8, 12):
        for i in range(count):
            key = bytes(rng.randrange(256) for _ in range(16))
            n = lengths[i] if i < len(lengths) else rng.randrange(0, 300)
            msg = bytes(rng.randrange(256) for _ in range(n))
            tag_len = 16 if i % 3 == 0 else rng.randrange(1, 17)
            tag = chaskey(key, msg, rounds, tag_len)
            print("%d %s %s %s" % (rounds, key.hex(), msg.hex() or "-", tag.hex()))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--self-test", metavar="VECTORS_JSON")
    ap.add_argument("--gen", type=int, metavar="N")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.self_test:
        return self_test(a.self_test)
    if a.gen:
        return generate(a.gen, a.seed)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
