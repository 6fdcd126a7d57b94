#!/usr/bin/env bash
# Bad input to the macsec subcommands (issue 13 items 12 and 15): every
# numeric option is checked (finite, in range; no wrap of "-1", no nan/inf),
# configurations that cannot work are refused, and each message names the
# option or JSON path and the rule. Nothing hangs (a FIFO as configuration
# is refused at once) and no key byte is ever printed. Needs no root: the
# refusals happen before any interface is touched.
# Usage: bash tests/cli/macsec_cli_errors.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
work="$(mktemp -d /tmp/macsec_cli_errors.XXXXXX)"
trap 'rm -rf "$work"' EXIT
umask 077
fail() { echo "FAIL: $*"; exit 1; }

openssl rand -hex 16 >"$work/k16"
openssl rand -hex 32 >"$work/k32"
openssl rand -hex 16 >"$work/k16b"
chmod 0600 "$work"/k*
key32="$(cat "$work/k32")"
frame=020000000002020000000001080045000014000000004011000000000000000000000000

n=0
# expect_refused "expected text" command... : non-zero exit within 10 s, the
# text in the output, and neither key in it.
expect_refused() {
  local text="$1"
  shift
  local rc=0
  timeout 10 "$@" >"$work/out" 2>&1 || rc=$?
  [[ $rc != 124 ]] || fail "hung: $*"
  [[ $rc != 0 ]] || fail "accepted: $* -> $(cat "$work/out")"
  grep -q -F -- "$text" "$work/out" || fail "message for '$*' does not say '$text': $(cat "$work/out")"
  if grep -q -F -e "$key32" -e "$(cat "$work/k16")" "$work/out"; then fail "a key was printed: $*"; fi
  n=$((n + 1))
}

p=(macsec protect --key-file "$work/k16" --hex "$frame")
v=(macsec validate --key-file "$work/k16" --sci 0211223344550001 --hex "$frame")
expect_refused "--an: '4' is outside 0..3" "$layersec" "${p[@]}" --an 4
expect_refused "--an: '-1' is not a whole number" "$layersec" "${p[@]}" --an -1
expect_refused "--pn: '-1' is not a whole number" "$layersec" "${p[@]}" --pn -1
expect_refused "--pn: '0' is outside 1.." "$layersec" "${p[@]}" --pn 0
expect_refused "--pn: 4294967296 is beyond the last PN of GCM-AES-128" "$layersec" "${p[@]}" --pn 4294967296
expect_refused "--pn: '1e3' is not a whole number" "$layersec" "${v[@]}" --pn 1e3
expect_refused "--offset: '51' is outside 0..50" "$layersec" "${p[@]}" --offset 51
expect_refused "--offset: must be 0, 30 or 50" "$layersec" "${p[@]}" --offset 20
expect_refused "--window: '-1' is not a whole number" "$layersec" "${v[@]}" --window -1
expect_refused "--window: '4294967296' is outside 0..4294967295" "$layersec" "${v[@]}" --window 4294967296
expect_refused "--suite: 'GCM-AES-64' is not a cipher suite" "$layersec" "${p[@]}" --suite GCM-AES-64
expect_refused "--sci: port identifier 0" "$layersec" macsec validate --key-file "$work/k16" --sci 0211223344550000 --hex "$frame"
expect_refused "--sci: port identifier 0" "$layersec" "${p[@]}" --sci 0211223344550000
expect_refused "found 32 bytes (64 hex digits), expected 16 bytes" "$layersec" macsec protect --key-file "$work/k32" --hex "$frame"
expect_refused "GCM-AES-128 needs a 16-octet SAK" "$layersec" macsec protect --key-file "$work/k32" --hex "$frame"
expect_refused "expected 32 bytes" "$layersec" macsec protect --suite GCM-AES-256 --key-file "$work/k16" --hex "$frame"
expect_refused "--validate: " "$layersec" "${v[@]}" --validate sometimes
expect_refused "--min-time: 'nan' is not a finite number" "$layersec" bench macsec --min-time nan
expect_refused "--min-time: '1e308' is outside" "$layersec" bench macsec --min-time 1e308

# macsec up: numeric options and files.
mkfifo "$work/fifo.json"
u=(macsec up --link lo --name lsx0)
for bad in 1e-9 1e308 nan inf -1 0.01; do
  expect_refused "--stats-interval: '$bad'" "$layersec" "${u[@]}" --config "$work/k16" --stats-interval "$bad"
done
expect_refused "not a regular file" "$layersec" "${u[@]}" --config "$work/fifo.json"
expect_refused "is a directory" "$layersec" "${u[@]}" --config "$work"
expect_refused "--name: 'this-name-is-far-too-long'" "$layersec" macsec up --link lo --name this-name-is-far-too-long --config "$work/k16"
# MKA or static SAKs; gPTP beside either (--ptp with --mka: the same file and
# checks, issue 17), in the user back end only: refused before anything changes.
expect_refused "--config excludes --mka" "$layersec" "${u[@]}" --config "$work/k16" --mka "$work/k16"
echo '{ "cak_file": "k16", "ckn": "6c617965727365632d636c69", "priority": 10, "cipher_suite": "gcm-aes-128" }' >"$work/mka.json"
echo '{ "protect": true, "profile": "automotive", "role": "master" }' >"$work/bad_ptp.json"
expect_refused "/role: 'master'" "$layersec" "${u[@]}" --mka "$work/mka.json" --ptp "$work/bad_ptp.json"
expect_refused "--mka: MKA drives the user-space SecY only" "$layersec" "${u[@]}" --mka "$work/mka.json" --ptp "$work/bad_ptp.json" --backend kernel

# macsec up: configurations that cannot work, each naming its JSON path.
config() {  # extra-top-level-members tx-key rx-sci
  cat >"$work/c.json" <<JSON
{ "cipher_suite": "GCM-AES-128" $1,
  "tx": { "sas": [ { "an": 0, "key_file": "$2" } ] },
  "rx": [ { "sci": "$3", "sas": [ { "an": 0, "key_file": "k16b" } ] } ] }
JSON
}
# extra top-level members | transmit key | receive SCI | expected message
while IFS='|' read -r extra txkey rxsci text; do
  config "$extra" "$txkey" "$rxsci"
  expect_refused "${text//@WORK@/$work}" "$layersec" "${u[@]}" --config "$work/c.json"
done <<'CASES'
, "port": 0|k16|0200000000020001|/port: must be 1..65535: port identifier 0 names no port
, "max_frame_size": 1|k16|0200000000020001|/max_frame_size: must be 0 (no limit) or 114..65535
, "sci": "0200000000020001"|k16|0200000000020001|/rx/0/sci: is this SecY's own transmit SCI (0200000000020001
|k32|0200000000020001|/tx/sas/0/key_file: @WORK@/k32: key in key file has the wrong size: found 32 bytes
|k32|0200000000020001|GCM-AES-128 needs a 16-octet SAK
, "pn_reserve_block": 0|k16|0200000000020001|/pn_reserve_block: must be 1..1073741824
, "lower_link": "off"|k16|0200000000020001|/lower_link: expected
|k16|0200000000020000|/rx/0/sci: port identifier 0
CASES

echo "PASS: macsec_cli_errors ($n refusals checked)"
