#!/usr/bin/env bash
# `layersec node` refuses bad configurations before opening any socket: exit
# status 2 and one line naming the file, the JSON path and the problem. Covers
# a bad multicast address, a JSON syntax error, a key file readable by others
# (refused, key bytes never printed) and a missing file. Needs no privileges.
# Usage: bash tests/cli/node_config_errors.sh /path/to/layersec
set -euo pipefail
LS="${1:?usage: $0 /path/to/layersec}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EXAMPLES="$HERE/../../examples/node"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
umask 077

fail() { echo "FAIL: $*"; exit 1; }

# expect_error CONFIG EXPECTED_STDERR_SUBSTRING
expect_error() {
  local st=0
  "$LS" node --config "$1" --duration 1 >"$WORK/out" 2>"$WORK/err" || st=$?
  [[ $st -eq 2 ]] || { cat "$WORK/err"; fail "$1: exit $st, expected 2"; }
  grep -F -- "$2" "$WORK/err" >/dev/null || { cat "$WORK/err"; fail "$1: message lacks '$2'"; }
  [[ ! -s "$WORK/out" ]] || { cat "$WORK/out"; fail "$1: printed on stdout"; }
  echo "ok: $(head -n 1 "$WORK/err")"
}

/usr/bin/python3 - "$EXAMPLES/multicast_publisher.json" "$WORK/bad_mc.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["services"][0]["eventgroups"][0]["multicast"]["address"] = "10.1.2.3"
json.dump(j, open(sys.argv[2], "w"))
PY
expect_error "$WORK/bad_mc.json" \
  "bad_mc.json: \$.services[0].eventgroups[0].multicast.address: not an IPv4 multicast address"

printf '{"unicast": "10.0.0.1",\n "services": [}\n' >"$WORK/syntax.json"
expect_error "$WORK/syntax.json" "JSON syntax"

expect_error "$WORK/absent.json" "absent.json: cannot open"

cp "$EXAMPLES/secured_server.json" "$WORK/"
mkdir -p "$WORK/keys"
key="00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
echo "$key" >"$WORK/keys/pair.key"
chmod 644 "$WORK/keys/pair.key"
expect_error "$WORK/secured_server.json" "\$.secoc.keys[0].file: $WORK/keys/pair.key:"
if grep -i "$key" "$WORK/err" >/dev/null; then fail "key bytes in the error message"; fi
chmod 600 "$WORK/keys/pair.key"
echo "${key:0:32}" >"$WORK/keys/pair.key"
expect_error "$WORK/secured_server.json" "needs 32 bytes"
echo "PASS"
