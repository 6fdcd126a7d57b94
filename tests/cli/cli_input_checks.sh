#!/usr/bin/env bash
# apps/layersec/cli_checks.h through the CLI, and the issue 13 input attacks
# on the commands that use them (items 7, 12-15), each reproduced:
#   - finite_in / whole_in: nan, inf, -1, 1e308, 1e-9, hex, overflow, bounds;
#   - kRegularFile / kOutputFile / kOutputDir, and configs read through
#     base/file.h: FIFO, directory, device,
#     symlink (its target untouched), missing parent;
#   - `node --duration nan` (ran forever), `keys issue --days 99999999`
#     (malformed certificate, exit 0), a 300-character CN ("OpenSSL internal
#     failure"), a directory as config (no path in the message);
#   - pcap output to a full file system (exit 0, "wrote N frames"): a 16 KiB
#     tmpfs in a private mount namespace (root), and a truncated capture read
#     back (taken as a short one, exit 0);
#   - key directories: group-writable and symlinked-to-0777 refused, naming
#     the directory; a 0700 directory accepted.
set -uo pipefail
LAYERSEC=${1:?usage: cli_input_checks.sh /path/to/layersec}
WORK=$(mktemp -d /tmp/cli_input_checks.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
n=0
fail() { echo "FAIL: $*"; exit 1; }
# expect RC PATTERN WHAT -- CMD...: exit status RC (or "nz": any non-zero
# below 124) and PATTERN (grep -E) in the output.
expect() {
  local want=$1 pat=$2 what=$3
  shift 4
  local out rc=0
  out=$(timeout 20 "$@" 2>&1) || rc=$?
  if [[ "$want" == nz ]]; then
    { [[ $rc -ne 0 && $rc -lt 124 ]]; } || fail "$what: exit $rc: $out"
  else
    [[ $rc -eq $want ]] || fail "$what: exit $rc (want $want): $out"
  fi
  [[ -z "$pat" ]] || grep -Eq -- "$pat" <<<"$out" || fail "$what: output lacks /$pat/: $out"
  n=$((n + 1))
}

mkfifo fifo
mkdir -m 700 d
echo '{}' > cfg.json

# ---- finite_in (node --duration: finite, 0..1e9) ----
expect 105 "^--duration: 'nan' is not a finite number" "duration nan" -- "$LAYERSEC" node --config cfg.json --duration nan
expect 105 "^--duration: 'inf' is not a finite number" "duration inf" -- "$LAYERSEC" node --config cfg.json --duration inf
expect 105 "^--duration: '-1' is outside 0..1000000000" "duration -1" -- "$LAYERSEC" node --config cfg.json --duration=-1
expect 105 "^--duration: '1e308' is outside" "duration 1e308" -- "$LAYERSEC" node --config cfg.json --duration 1e308
expect 105 "^--duration: '1e999' is not a finite number" "duration overflow" -- "$LAYERSEC" node --config cfg.json --duration 1e999
expect 105 "^--duration: '2s' is not a number" "duration 2s" -- "$LAYERSEC" node --config cfg.json --duration 2s
# In range: parsing passes and the config is what fails (exit 2, JSON path).
expect 2 'cfg.json' "duration 1e-9 accepted by the check" -- "$LAYERSEC" node --config cfg.json --duration 1e-9
# ---- whole_in (keys handshake --iterations 1..1000000, establish --eventgroup 0..65535) ----
for v in nan inf -1 1e308 1e-9 1.5 +3; do
  expect 105 "^--iterations: '.*' is not a whole number \\(digits only" "iterations $v" -- \
    "$LAYERSEC" keys handshake --iterations="$v"
done
expect 105 "^--iterations: '0' is outside 1..1000000" "iterations 0" -- "$LAYERSEC" keys handshake --iterations 0
expect 105 "^--iterations: '18446744073709551616' is too large" "iterations 2^64" -- "$LAYERSEC" keys handshake --iterations 18446744073709551616
expect 105 "^--eventgroup: '0x10000' is outside 0..65535" "eventgroup 0x10000" -- \
  "$LAYERSEC" keys establish --ca d --publisher d/p --subscriber d/s --service 0x1234 --eventgroup 0x10000
expect 0 "Mode B handshake, kem x25519, 1 iterations" "iterations 1" -- "$LAYERSEC" keys handshake --kem x25519 --iterations 1

# ---- config files through base/file.h (node, secoc describe: exit 2, "FILE: reason") ----
expect 2 "^layersec node: $WORK/fifo: not a regular file \\(FIFO\\)" "config FIFO" -- "$LAYERSEC" node --config "$WORK/fifo"
expect 2 "^layersec node: $WORK/d: is a directory, not a regular file" "config directory" -- "$LAYERSEC" node --config "$WORK/d"
expect 2 "^layersec node: /dev/zero: not a regular file \\(device\\)" "config device" -- "$LAYERSEC" node --config /dev/zero
expect 2 "^layersec node: $WORK/nope.json: cannot open: No such file" "config missing" -- "$LAYERSEC" node --config "$WORK/nope.json"
expect 2 "$WORK/d: is a directory, not a regular file" "secoc config directory" -- "$LAYERSEC" secoc describe --config "$WORK/d"
# ---- kRegularFile (bench scenario-node --spec, selftest --chaskey-xcheck) ----
expect 105 "^--spec: $WORK/fifo: not a regular file \\(FIFO, device or socket refused\\)" "spec FIFO" -- \
  "$LAYERSEC" bench scenario-node --spec "$WORK/fifo"
expect 105 "^--spec: $WORK/d: is a directory, not a regular file" "spec directory" -- "$LAYERSEC" bench scenario-node --spec "$WORK/d"
expect 105 "$WORK/nope: No such file" "xcheck missing" -- "$LAYERSEC" selftest --chaskey-xcheck "$WORK/nope"
# ---- kOutputFile (keys handshake --json) ----
echo "precious" > victim
ln -s "$WORK/victim" link.json
expect 105 "^--json: $WORK/link.json: is a symbolic link" "json symlink" -- "$LAYERSEC" keys handshake --kem x25519 --iterations 1 --json "$WORK/link.json"
[[ "$(cat victim)" == precious ]] || fail "the symlink's target was written"
expect 105 "^--json: /dev/full: not a regular file" "json /dev/full" -- "$LAYERSEC" keys handshake --kem x25519 --iterations 1 --json /dev/full
expect 105 "^--json: $WORK/fifo: not a regular file" "json FIFO" -- "$LAYERSEC" keys handshake --kem x25519 --iterations 1 --json "$WORK/fifo"
expect 105 "^--json: $WORK/no/such: No such file" "json missing parent" -- "$LAYERSEC" keys handshake --kem x25519 --iterations 1 --json "$WORK/no/such/x.json"
expect 0 "" "json regular file" -- "$LAYERSEC" keys handshake --kem x25519 --iterations 1 --json "$WORK/hs.json"
grep -q '"kem": "x25519"' hs.json || fail "hs.json not written"
# ---- kOutputDir (keys ca --out) ----
expect 105 "^--out: $WORK/victim: exists and is not a directory" "out is a file" -- "$LAYERSEC" keys ca --out "$WORK/victim" --name c
expect 105 "^--out: $WORK/fifo: exists and is not a directory" "out is a FIFO" -- "$LAYERSEC" keys ca --out "$WORK/fifo" --name c

# ---- keys: validity and CN (items 14, 15) ----
expect 0 "" "CA" -- "$LAYERSEC" keys ca --out ca --name walker-ca
expect 105 "^--days: '99999999' is outside 1..3000000" "days 99999999" -- \
  "$LAYERSEC" keys issue --ca ca --out ecu --name e --services 0x1234 --days 99999999
expect 2 "^layersec keys: --days 2950000 ends after 9999-12-31T23:59:59Z, the latest time X.509 can encode" "days past 9999" -- \
  "$LAYERSEC" keys issue --ca ca --out ecu --name e --services 0x1234 --alg p256 --days 2950000
expect 105 "^--not-after: '253402300800' is outside 1..253402300799" "not-after past 9999" -- \
  "$LAYERSEC" keys issue --ca ca --out ecu --name e --services 0x1234 --not-before 1 --not-after 253402300800
expect 0 "issued 'last'" "valid until 9999-12-31T23:59:59Z" -- \
  "$LAYERSEC" keys issue --ca ca --out ecu --name last --services 0x1234 --alg p256 --not-before 1700000000 --not-after 253402300799
expect 0 "not after:    9999-12-31T23:59:59Z" "show the last second" -- "$LAYERSEC" keys show --cert ecu/last.pem
if command -v openssl >/dev/null; then
  openssl x509 -in ecu/last.pem -noout -enddate 2>&1 | grep -q "Dec 31 23:59:59 9999 GMT" || fail "openssl does not read notAfter 9999"
fi
long=$(printf 'a%.0s' $(seq 300))
expect 2 "^layersec keys: --name has 300 characters; X.509 allows at most 64 \\(RFC 5280 ub-common-name\\)" "300-character CN" -- \
  "$LAYERSEC" keys issue --ca ca --out ecu --name "$long" --services 0x1234 --alg p256
expect 2 "^layersec keys: --name has 65 characters" "CA CN of 65" -- "$LAYERSEC" keys ca --out ca2 --name "${long:0:65}"
expect 0 "issued '${long:0:64}'" "64-character CN" -- "$LAYERSEC" keys issue --ca ca --out ecu --name "${long:0:64}" --services 0x1234 --alg p256
expect 1 "^layersec keys: --cert: $WORK/fifo: not a regular file \\(FIFO\\)" "certificate FIFO" -- "$LAYERSEC" keys show --cert "$WORK/fifo"

# ---- key directories (item 7) ----
mkdir -m 770 team && cp -a ca team/ca
expect 1 "directory $WORK/team is writable by its group \\(mode 0770, no sticky bit\\)" "group-writable key directory" -- \
  "$LAYERSEC" keys issue --ca team/ca --out ecu --name g --services 0x1234 --alg p256
mkdir open && cp -a ca/. open/ && chmod 0777 open && ln -s "$WORK/open" keys-link
expect 1 "directory $WORK/open is writable by others \\(mode 0777, no sticky bit\\)" "symlink to a 0777 directory" -- \
  "$LAYERSEC" keys verify --ca keys-link --cert ecu/last.pem --key keys-link/ca.key
mkdir -m 700 private && cp -a ca/. private/ && ln -s "$WORK/private" ok-link
expect 1 "key does not belong" "0700 directory through a symlink is accepted (the key is read and compared)" -- \
  "$LAYERSEC" keys verify --ca ok-link --cert ecu/last.pem --key ok-link/ca.key

# ---- pcap output and input (item 13) ----
expect 105 "^--out: /dev/full: not a regular file" "pcap to /dev/full" -- \
  "$LAYERSEC" someip sd-sim --out /dev/full --duration-ms 100
ln -s "$WORK/victim" cap-link.pcap
expect 105 "^--out: $WORK/cap-link.pcap: is a symbolic link" "pcap through a symlink" -- \
  "$LAYERSEC" someip pcap --out "$WORK/cap-link.pcap" "10.0.0.1:1>10.0.0.2:2=00"
[[ "$(cat victim)" == precious ]] || fail "the pcap symlink's target was written"
if [[ "$(id -u)" == 0 ]] && command -v unshare >/dev/null; then
  mkdir -m 700 mnt
  out=$(unshare --mount --propagation private -- sh -c \
    "mount -t tmpfs -o size=16k tmpfs '$WORK/mnt' && timeout 20 '$LAYERSEC' someip sd-sim --out '$WORK/mnt/sd.pcap' --duration-ms 600000" 2>&1)
  rc=$?
  [[ $rc -ne 0 && $rc -lt 124 ]] || fail "pcap to a full file system: exit $rc: ${out:0:300}"
  grep -q "$WORK/mnt/sd.pcap: write failed: No space left on device" <<<"$out" || fail "full file system message: ${out:0:300}"
  n=$((n + 1))
else
  echo "note: not root, the full-file-system case is covered by base_test and net_test only"
fi
expect 0 "" "sv pcap" -- "$LAYERSEC" sv pcap --out "$WORK/sv.pcap" --frames 5
truncate -s -20 sv.pcap
expect nz "truncated capture: record 5" "truncated capture is an error" -- "$LAYERSEC" sv decode --pcap "$WORK/sv.pcap"
expect nz "$WORK/fifo: not a regular file" "pcap input FIFO" -- "$LAYERSEC" sv decode --pcap "$WORK/fifo"

echo "ok: $n input checks"
