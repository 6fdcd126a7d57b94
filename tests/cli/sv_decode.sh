#!/usr/bin/env bash
# `layersec sv pcap` then `layersec sv decode`: frames we sign verify with the
# right key and are all dropped (and counted) with a wrong one; key files
# readable by others are refused; the independent capture decodes cleanly.
set -euo pipefail
bin="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
umask 077
printf '000102030405060708090a0b0c0d0e0f' >"$out/k"
printf 'f00102030405060708090a0b0c0d0e0f' >"$out/wrong"
for auth in chaskey12-selective aes-gmac-128 chaskey12-full; do
  "$bin" sv pcap --out "$out/s.pcap" --profile 12800/8 --frames 50 --auth "$auth" --key "$out/k" --key-id 3 >/dev/null
  "$bin" sv decode --pcap "$out/s.pcap" --profile 12800/8 --auth "$auth" --key "$out/k" --key-id 3 >"$out/ok.txt"
  "$bin" sv decode --pcap "$out/s.pcap" --profile 12800/8 --auth "$auth" --key "$out/wrong" --key-id 3 >"$out/bad.txt"
  "$bin" sv decode --pcap "$out/s.pcap" --profile 12800/8 --auth "$auth" --key "$out/k" --key-id 4 >"$out/unknown.txt"
  /usr/bin/python3 - "$out" "$auth" <<'PY'
import json, sys
d, auth = sys.argv[1], sys.argv[2]
ok = json.loads(open(f"{d}/ok.txt").read().splitlines()[-1])["counters"]
bad = json.loads(open(f"{d}/bad.txt").read().splitlines()[-1])["counters"]
unk = json.loads(open(f"{d}/unknown.txt").read().splitlines()[-1])["counters"]
assert ok["frames"] == 50 and ok["delivered"] == 50 and ok["bad_tag"] == 0 and ok["gaps"] == 0, ok
assert bad["delivered"] == 0 and bad["bad_tag"] == 50, bad
assert unk["delivered"] == 0 and unk["unknown_key"] == 50, unk
print(f"sv_decode: {auth}: 50 verified, 50 bad tags, 50 unknown keys")
PY
done
# An unsecured subscriber refuses secured frames rather than skipping the check.
"$bin" sv decode --pcap "$out/s.pcap" --profile 12800/8 >"$out/plain.txt"
grep -q '"unexpected_extension":50' "$out/plain.txt"
# Key files must not be readable by group or others.
chmod 644 "$out/k"
if "$bin" sv decode --pcap "$out/s.pcap" --profile 12800/8 --auth aes-gmac-128 --key "$out/k" >"$out/perm.txt" 2>&1; then
  echo "sv_decode: a world-readable key file was accepted" >&2
  exit 1
fi
grep -q "chmod 600" "$out/perm.txt"
# The independent publisher's 1-ASDU frames (svID TESTMU0101) through the subscriber.
vec="${LAYERSEC_VECTORS_DIR:-$(dirname "$0")/../../../shared/vectors}"
"$bin" sv decode --pcap "$vec/sv/independent-publisher-4i4u.pcap" --profile 4000/1 --sv-id TESTMU0101 --timeout-ms 50 --json >"$out/ind.txt"
/usr/bin/python3 - "$out/ind.txt" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
c = lines[-1]["counters"]
frames = lines[:-1]
assert c["frames"] == 100, c
# 1-ASDU frames are delivered (frames 1-20 and, after the other groups and a
# stream timeout that restarts supervision, 81-100 whose smpCnt restarts at 0);
# the 2/6/8-ASDU frames are dropped as wrong-noasdu for a 1-ASDU subscription.
delivered = [f["frame"] for f in frames if f["delivered"]]
assert delivered == list(range(1, 21)) + list(range(81, 101)), delivered
assert c["timeouts"] == 1 and c["gaps"] == 0 and c["wrong_no_asdu"] == 60, c
assert all(not f["delivered"] and f["reason"] == "wrong-noasdu" for f in frames[20:80]), frames[20:80]
assert c["malformed"] == 0, c
print(f"sv_decode: independent capture: {c['delivered']} delivered, {c['wrong_no_asdu']} multi-ASDU frames refused")
PY
