#!/usr/bin/env bash
# smpCnt wrap at 96 kHz (issue 13, item 11). smpCnt is 16 bits, so a
# 96,000 samples/s stream cannot count a whole second; the default wrap of
# the 96000/1 profile is the 16-bit range (65,536, what libiec61850's
# publisher does) and --smp-cnt-wrap sets another per stream.
#   - 70,000 frames wrapping at 65,536 are all delivered by a default
#     subscriber; a subscriber told 48,000 (the old default) drops the 17,536
#     frames with smpCnt >= 48,000 as bad smpCnt, the failure that was seen;
#   - 70,000 frames wrapping at 48,000 are all delivered by a subscriber told
#     48,000; a default one delivers them too but reports the 17,536 samples
#     it believes lost at the early wrap (one gap);
#   - the same under selective Chaskey-12 (the frame counter is unaffected).
# Needs no privileges. Usage: bash tests/cli/sv_wrap.sh /path/to/layersec
set -euo pipefail
LS="${1:?usage: $0 /path/to/layersec}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
umask 077
printf '000102030405060708090a0b0c0d0e0f' >"$WORK/k"

# decode PCAP WRAP|- AUTH -> prints the counters JSON
decode() {
  local args=(sv decode --pcap "$1" --profile 96000/1 --timeout-ms 1)
  [[ "$2" != - ]] && args+=(--smp-cnt-wrap "$2")
  [[ "$3" != none ]] && args+=(--auth "$3" --key "$WORK/k")
  "$LS" "${args[@]}" | tail -n 1
}

for auth in none chaskey12-selective; do
  key=()
  [[ "$auth" != none ]] && key=(--auth "$auth" --key "$WORK/k")
  "$LS" sv pcap --out "$WORK/w65536.pcap" --profile 96000/1 --frames 70000 "${key[@]}" >/dev/null
  "$LS" sv pcap --out "$WORK/w48000.pcap" --profile 96000/1 --frames 70000 --smp-cnt-wrap 48000 "${key[@]}" >/dev/null
  decode "$WORK/w65536.pcap" - "$auth" >"$WORK/a.json"
  decode "$WORK/w65536.pcap" 48000 "$auth" >"$WORK/b.json"
  decode "$WORK/w48000.pcap" 48000 "$auth" >"$WORK/c.json"
  decode "$WORK/w48000.pcap" - "$auth" >"$WORK/d.json"
  /usr/bin/python3 - "$WORK" "$auth" <<'PY'
import json, sys
d, auth = sys.argv[1], sys.argv[2]
c = {k: json.load(open(f"{d}/{k}.json"))["counters"] for k in "abcd"}
a, b, cc, dd = c["a"], c["b"], c["c"], c["d"]
assert a["frames"] == 70000 and a["delivered"] == 70000 and a["gaps"] == 0 and a["bad_smp_cnt"] == 0, a
assert b["delivered"] == 70000 - 17536 and b["bad_smp_cnt"] == 17536, b
assert cc["delivered"] == 70000 and cc["gaps"] == 0 and cc["bad_smp_cnt"] == 0, cc
assert dd["delivered"] == 70000 and dd["gaps"] == 1 and dd["missing_samples"] == 17536, dd
for x in (a, b, cc, dd):
    assert x["bad_tag"] == 0 and x["replays"] == 0 and x["malformed"] == 0, x
print(f"sv_wrap: {auth}: wrap 65536 -> 70000/70000 delivered (48000-subscriber: {b['bad_smp_cnt']} bad smpCnt); "
      f"wrap 48000 -> 70000/70000 with --smp-cnt-wrap 48000")
PY
done
echo "PASS"
