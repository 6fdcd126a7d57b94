#!/usr/bin/env bash
# Bad numbers and files given to the `layersec sv` subcommands are refused at
# once with a non-zero exit and a message naming the option, before any
# socket is opened (so no privileges are needed): nan, inf, negative values
# that CLI11 would wrap to 2^64-1, zero where a positive value is needed,
# values beyond a range, a FIFO where a regular file is meant. `sv pcap`
# output goes through OutputFile: a symlink at the path is refused (its
# target untouched), a directory is refused, a write failure (/dev/full)
# names the path and exits non-zero instead of printing "wrote N frames".
# Every command runs under `timeout` so that a hang (the old `--interval nan`
# and `--duration -1` ran forever) fails the test rather than blocking it.
# Usage: bash tests/cli/sv_options.sh /path/to/layersec
set -euo pipefail
LS="${1:?usage: $0 /path/to/layersec}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
umask 077
fail() { echo "FAIL: $*"; exit 1; }

# refused "SUBSTRING" ARGS... : non-zero exit within 10 s, SUBSTRING on stderr.
n=0
refused() {
  local want="$1" st=0
  shift
  timeout 10 "$LS" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || st=$?
  [[ $st -ne 0 ]] || { cat "$WORK/out"; fail "accepted: $*"; }
  [[ $st -ne 124 ]] || fail "hung (killed after 10 s): $*"
  grep -F -- "$want" "$WORK/err" >/dev/null || { cat "$WORK/err"; fail "$*: message lacks '$want'"; }
  n=$((n + 1))
}

printf '000102030405060708090a0b0c0d0e0f' >"$WORK/k16"

# sv subscribe (each of these used to hang, wrap or be accepted)
for bad in nan inf -1 0 1e-9 100000; do refused "--interval" sv subscribe --iface lo --interval "$bad"; done
for bad in nan -1 inf 1e300; do refused "--duration" sv subscribe --iface lo --duration "$bad"; done
for bad in nan 0 -5 inf 1e12; do refused "--timeout-ms" sv subscribe --iface lo --timeout-ms "$bad"; done
for bad in -1 65536 0x10000 12.5 nan; do refused "--appid" sv subscribe --iface lo --appid "$bad"; done
for bad in -1 4294967296 1e3; do refused "--key-id" sv subscribe --iface lo --key-id "$bad"; done
for bad in 0 65537 -1 nan; do refused "--smp-cnt-wrap" sv subscribe --iface lo --smp-cnt-wrap "$bad"; done
# sv subscribe --state / --first-start / --floor-reserve (the counter floor file):
# refused before any socket is opened, naming the option or the file and why.
sub=(sv subscribe --iface lo --auth chaskey12-selective --key "$WORK/k16")
for bad in 0 -1 nan 1e3 1000000001 18446744073709551616; do
  refused "--floor-reserve" "${sub[@]}" --state "$WORK/floor" --first-start --floor-reserve "$bad"
done
refused "need --state" "${sub[@]}" --first-start
refused "need --state" "${sub[@]}" --floor-reserve 5
refused "give --auth" sv subscribe --iface lo --state "$WORK/floor" --first-start
refused "give --first-start on the very first run only" "${sub[@]}" --state "$WORK/floor"
[[ ! -e "$WORK/floor" ]] || fail "a refused sv subscribe created its floor file"
echo precious >"$WORK/floor-target"
chmod 600 "$WORK/floor-target"
ln -s "$WORK/floor-target" "$WORK/floor-link"
refused "floor-link: SV floor file is a symbolic link" "${sub[@]}" --state "$WORK/floor-link"
refused "floor-link" "${sub[@]}" --state "$WORK/floor-link" --first-start
[[ "$(cat "$WORK/floor-target")" == precious ]] || fail "sv subscribe wrote through a floor file symlink"
printf 'layersec-sv-floor 1\nstream 4000 zz 1\n' >"$WORK/floor-bad"
refused "line 2: svID" "${sub[@]}" --state "$WORK/floor-bad"
printf 'layersec-sv-floor 1\nend 00\n' >"$WORK/floor-sum"
refused "line 2: checksum" "${sub[@]}" --state "$WORK/floor-sum" --first-start
cp "$WORK/floor-target" "$WORK/floor-open"
chmod 644 "$WORK/floor-open"
refused "floor-open" "${sub[@]}" --state "$WORK/floor-open"
refused "--state" "${sub[@]}" --state "$WORK"
refused "below the 8 ASDUs" sv decode --pcap "$WORK/k16" --profile 12800/8 --smp-cnt-wrap 4

# sv publish
for bad in nan -1 inf 1e8; do refused "--duration" sv publish --iface lo --duration "$bad"; done
for bad in -1 18446744073709551615 2.5; do refused "--count" sv publish --iface lo --count "$bad"; done
for bad in nan -5 1e6; do refused "--spin-us" sv publish --iface lo --duration 1 --spin-us "$bad"; done
for bad in -1 4294967296; do refused "--conf-rev" sv publish --iface lo --duration 1 --conf-rev "$bad"; done
refused "--smp-cnt-wrap" sv publish --iface lo --duration 1 --smp-cnt-wrap 70000
refused "give --duration" sv publish --iface lo

# sv pcap: --frames -1 used to wrap to 2^64-1 and fill the disk
for bad in -1 0 nan 1e3 10000001 18446744073709551615; do
  refused "--frames" sv pcap --out "$WORK/x.pcap" --frames "$bad"
done
[[ ! -e "$WORK/x.pcap" ]] || fail "a refused sv pcap created its output"
echo precious >"$WORK/target"
ln -s "$WORK/target" "$WORK/link.pcap"
refused "link.pcap: is a symbolic link" sv pcap --out "$WORK/link.pcap" --frames 5
[[ "$(cat "$WORK/target")" == precious ]] || fail "sv pcap wrote through a symlink"
mkdir "$WORK/dir.pcap"
refused "dir.pcap" sv pcap --out "$WORK/dir.pcap" --frames 5
refused "/dev/full: not a regular file" sv pcap --out /dev/full --frames 5
# A full file system (a 16 KiB tmpfs in a private mount namespace; root only):
# the write error names the file and the exit status is non-zero.
if [[ "$(id -u)" == 0 ]] && command -v unshare >/dev/null; then
  mkdir "$WORK/small"
  st=0
  unshare -m sh -c 'mount -t tmpfs -o size=16k none "$1" && exec "$2" sv pcap --out "$1/full.pcap" --frames 1000' \
    sh "$WORK/small" "$LS" >"$WORK/out" 2>"$WORK/err" || st=$?
  [[ $st -ne 0 ]] || fail "sv pcap on a full file system exited 0: $(cat "$WORK/out")"
  grep -F "$WORK/small/full.pcap: " "$WORK/err" >/dev/null || { cat "$WORK/err"; fail "ENOSPC message lacks the path"; }
  ! grep -q "wrote" "$WORK/out" || fail "sv pcap reported success on a full file system"
  echo "sv_options: full file system: $(cat "$WORK/err")"
  n=$((n + 1))
fi
"$LS" sv pcap --out "$WORK/ok.pcap" --frames 5 >"$WORK/out"
grep -q "wrote 5 frames" "$WORK/out" || fail "a valid sv pcap failed"
[[ "$(stat -c %s "$WORK/ok.pcap")" == $((24 + 5 * (16 + 126))) ]] || fail "ok.pcap has the wrong size"

# sv decode
mkfifo "$WORK/fifo"
refused "not a regular file" sv decode --pcap "$WORK/fifo"
for bad in nan -1 inf; do refused "--timeout-ms" sv decode --pcap "$WORK/ok.pcap" --timeout-ms "$bad"; done

# sv kdc
mkdir -m 700 "$WORK/kdc"
kdc=(sv kdc --listen 127.0.0.1:47999 --dir "$WORK/kdc" --stream 0x4000,LAYERSEC01,chaskey12-selective,MU01,P101)
for bad in nan -1 0 inf; do refused "--lifetime" "${kdc[@]}" --lifetime "$bad"; done
for bad in nan -1 inf; do refused "--lead" "${kdc[@]}" --lead "$bad"; done
for bad in nan -1 inf; do refused "--duration" "${kdc[@]}" --duration "$bad"; done
for bad in nan inf -1 1e300; do refused "--remove P101@$bad: SECONDS" "${kdc[@]}" --remove "P101@$bad" --duration 1; done
refused "APPID" sv kdc --listen 127.0.0.1:47999 --dir "$WORK/kdc" --stream -1,X,chaskey12-selective,MU01,P101
refused "port 1..65535" sv kdc --listen 127.0.0.1:-1 --dir "$WORK/kdc" --stream 0x4000,X,chaskey12-selective,MU01,P101

# bench sv
refused "--frames" bench sv --frames -1
refused "--json" bench sv --smoke --json "$WORK/fifo"     # refused at once, not after the run
refused "--json" bench sv --smoke --json "$WORK/link.pcap"
for bad in nan 0 -1 1e9; do refused "--pacing-seconds" bench sv --pacing-seconds "$bad"; done

echo "sv_options: $n bad invocations refused, each with the option named"
echo "PASS"
