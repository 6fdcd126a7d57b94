#!/usr/bin/env bash
# Frames written by layersec's SV publisher must dissect in tshark as `sv`
# with the values we put in: every profile, with and without the 802.1Q tag,
# unsecured and with each authentication scheme (the extension is appended
# after the savPdu; tshark still decodes every ASDU field).
set -euo pipefail
bin="$1"
command -v tshark >/dev/null || { echo "sv_tshark: tshark is required (scripts/install-deps.sh installs it)" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
umask 077
printf '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f' >"$out/key32"
printf '000102030405060708090a0b0c0d0e0f' >"$out/key16"

check() {  # profile asdus frames vlan auth key
  local profile="$1" asdus="$2" frames="$3" vlan="$4" auth="$5" key="$6"
  local args=(sv pcap --out "$out/f.pcap" --profile "$profile" --frames "$frames" --sv-id MU0042 --appid 16385 --conf-rev 7 --auth "$auth")
  [ "$vlan" = no ] && args+=(--no-vlan)
  [ "$auth" != none ] && args+=(--key "$out/$key" --key-id 5)
  "$bin" "${args[@]}" >/dev/null
  tshark -r "$out/f.pcap" -T fields -E separator=';' -e sv.appid -e sv.noASDU -e sv.svID -e sv.smpCnt \
    -e sv.confRev -e sv.smpSynch -e vlan.priority -e sv.reserve1 2>/dev/null >"$out/fields"
  /usr/bin/python3 - "$out/fields" "$asdus" "$frames" "$vlan" "$auth" "$profile" <<'PY'
import sys
path, asdus, frames, vlan, auth, profile = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
wrap = int(profile.split("/")[0])
if wrap > 65536: wrap = 65536  # 16-bit smpCnt: the default wrap above 65536/s
lines = [l.rstrip("\n") for l in open(path) if l.strip()]
assert len(lines) == frames, (profile, auth, len(lines))
cnt = 0
for line in lines:
    appid, noasdu, svids, cnts, confrevs, synchs, prio, res1 = line.split(";")
    assert int(appid, 16) == 0x4001, line
    assert int(noasdu) == asdus, line
    assert svids.split(",") == ["MU0042"] * asdus, line
    assert [int(x) for x in confrevs.split(",")] == [7] * asdus, line
    assert [int(x) for x in synchs.split(",")] == [2] * asdus, line
    for c in cnts.split(","):
        assert int(c) == cnt, (line, cnt)
        cnt = (cnt + 1) % wrap
    assert (prio == "4") == (vlan == "yes"), line
    ext = int(res1, 0) & 0xFF
    assert (ext != 0) == (auth != "none"), line
print(f"sv_tshark: {profile} vlan={vlan} auth={auth}: {frames} frames dissected as sv")
PY
}

check 4000/1 1 20 yes none -
check 4000/1 1 20 no none -
check 4800/2 2 10 yes none -
check 5760/1 1 10 yes none -
check 14400/6 6 10 yes none -
check 12800/8 8 10 no none -
check 15360/8 8 10 yes none -
check 96000/1 1 40 yes none -
check 4000/1 1 5 yes hmac-sha256-80 key32
check 4800/2 2 5 yes hmac-sha256 key32
check 14400/6 6 5 yes aes-gmac-64 key16
check 12800/8 8 5 no aes-gmac-128 key16
check 4000/1 1 5 yes blake2s key32
check 4000/1 1 5 yes chaskey12-full key16
check 15360/8 8 5 yes chaskey12-selective key16
