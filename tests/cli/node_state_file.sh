#!/usr/bin/env bash
# `layersec node` and its SecOC state file (issue 13, item 5), on loopback
# (127.0.0.78, ports off the defaults); needs no privileges:
#   1. a missing state file is refused, naming --first-start;
#   2. --first-start provisions it (mode 0600); a later plain start bumps the
#      trip counter and never goes back;
#   3. a deleted state file is refused again (no silent restart at trip 1);
#   4. a corrupt one is reported as corrupt, not as "cannot be read";
#   5. a symlink planted at the state path is refused and its target kept;
#   6. a state file others can read is refused.
# Usage: bash tests/cli/node_state_file.sh /path/to/layersec
set -euo pipefail
LS="${1:?usage: $0 /path/to/layersec}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d)"
chmod 700 "$WORK"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; cat "$WORK"/err 2>/dev/null | tail -n 5; exit 1; }

mkdir -p "$WORK/keys"
(umask 077 && openssl rand -hex 32 >"$WORK/keys/pair.key")
/usr/bin/python3 - "$HERE/../../examples/node/secured_server.json" "$WORK/node.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["unicast"] = "127.0.0.78"
j["service-discovery"]["port"] = "31491"
j["services"][0]["unreliable"] = "31519"
j["services"][1]["unreliable"] = "31520"
j["secoc"]["stateFile"] = "node.state"
json.dump(j, open(sys.argv[2], "w"))
PY
STATE="$WORK/node.state"

# run ARGS...: a 0.3 s node run; leaves its exit status in $st.
run() {
  st=0
  "$LS" node --config "$WORK/node.json" --duration 0.3 --json "$@" >"$WORK/out" 2>"$WORK/err" || st=$?
}
trip() { grep '^tx_trip' "$STATE" | awk '{print $2}'; }

run
[[ $st -ne 0 ]] || fail "missing state file accepted"
grep -q -- "--first-start" "$WORK/err" || fail "missing state: message does not name --first-start"
grep -q "missing" "$WORK/err" || fail "missing state: message does not say missing"
[[ ! -e "$STATE" ]] || fail "a refused start created the state file"
echo "ok: missing state file refused"

run --first-start
[[ $st -eq 0 ]] || fail "--first-start: exit $st"
[[ "$(stat -c %a "$STATE")" == 600 ]] || fail "state file mode $(stat -c %a "$STATE")"
t1="$(trip)"
run
[[ $st -eq 0 ]] || fail "second start: exit $st"
t2="$(trip)"
[[ "$t2" -gt "$t1" ]] || fail "trip counter did not advance ($t1 -> $t2)"
run --first-start  # harmless on an existing file: never rewinds
t3="$(trip)"
[[ "$t3" -gt "$t2" ]] || fail "--first-start on an existing file rewound the trip counter ($t2 -> $t3)"
echo "ok: provisioned at trip $t1, then $t2, $t3 (never back)"

rm "$STATE"
run
[[ $st -ne 0 ]] || fail "deleted state file accepted (trip counter would restart at 1)"
grep -q "missing" "$WORK/err" || fail "deleted state: wrong message"
echo "ok: deleted state file refused"

printf 'layersec-secoc-state 1\ntx_trip 9\n' >"$STATE"  # truncated: no "end"
chmod 600 "$STATE"
run
[[ $st -ne 0 ]] || fail "corrupt state accepted"
grep -q "corrupt" "$WORK/err" || fail "corrupt state not reported as corrupt: $(cat "$WORK/err")"
grep -q "cannot be read or written" "$WORK/err" && fail "corrupt state reported as unreadable"
echo "ok: corrupt state reported as corrupt"

rm "$STATE"
echo precious >"$WORK/victim"
ln -s "$WORK/victim" "$STATE"
run --first-start
[[ $st -ne 0 ]] || fail "symlinked state file accepted"
grep -q "symbolic link" "$WORK/err" || fail "symlink: wrong message: $(cat "$WORK/err")"
[[ "$(cat "$WORK/victim")" == precious ]] || fail "the symlink's target was written"
rm "$STATE"
echo "ok: symlinked state file refused, target untouched"

run --first-start
[[ $st -eq 0 ]] || fail "re-provisioning: exit $st"
chmod 644 "$STATE"
run
[[ $st -ne 0 ]] || fail "state file with mode 0644 accepted"
grep -q "group or others" "$WORK/err" || fail "0644: wrong message: $(cat "$WORK/err")"
echo "ok: group/other-readable state file refused"
echo "PASS"
