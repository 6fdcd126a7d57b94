#!/usr/bin/env bash
# layersec's ARXML import against an independent reader, Debian's
# python3-canmatrix (docs/arxml.md, "python3-canmatrix"):
#   1. for both files of the secured echo pair (testdata/arxml), canmatrix's
#      Ethernet reading (loadp(decode_ethernet=True): one frame per
#      SOCKET-CONNECTION-IPDU-IDENTIFIER, header_id = its HEADER-ID) finds the
#      same SOME/IP Message IDs, with the same multiplicity, as the ones
#      `layersec config import-arxml` bound its SecOC Tx/Rx PDUs to;
#   2. what canmatrix writes back from that model (dumpp to .arxml: a CAN
#      cluster of signal I-PDUs, no SOME/IP deployment, no SecOC ECUC) is
#      refused by the import with status 2 and a message, nothing written.
# canmatrix reads no SecOC ECUC values and no service deployment: those have no
# second reader (docs/arxml.md). Exits 77 when python3-canmatrix is missing.
# Usage: bash tests/cli/arxml_canmatrix.sh /path/to/layersec
set -euo pipefail
LS="${1:?usage: $0 /path/to/layersec}"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if ! /usr/bin/python3 -c 'import canmatrix.formats' 2>/dev/null; then
  echo "SKIP: python3-canmatrix is not installed (apt-get install python3-canmatrix): no independent ARXML reader"
  exit 77
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; cat "$WORK"/out "$WORK"/err 2>/dev/null | tail -n 8; exit 1; }
echo "python3-canmatrix $(dpkg-query -W -f='${Version}' python3-canmatrix 2>/dev/null || echo '(not from a .deb)')"

# 1. The same Message IDs for the secured PDUs, server and client.
for side in server:65001:65002 client:65002:65001; do
  IFS=: read -r name tx rx <<<"$side"
  file="$SRC/testdata/arxml/echo_$name.arxml"
  "$LS" config import-arxml "$file" --out "$WORK/$name" --sync-tx-data-id "$tx" --sync-rx-data-id "$rx" \
    --quiet >"$WORK/out" 2>"$WORK/err" || fail "import of echo_$name.arxml exited $?"
  /usr/bin/python3 - "$file" "$WORK/$name/node.json" <<'PY' || fail "canmatrix and layersec disagree on echo_$name.arxml"
import collections, json, logging, sys
logging.disable(logging.CRITICAL)
import canmatrix.formats
theirs = collections.Counter()
for db in canmatrix.formats.loadp(sys.argv[1], decode_ethernet=True).values():
    for f in db.frames:
        theirs[f.header_id] += 1
ours = collections.Counter()
for b in json.load(open(sys.argv[2]))["secoc"]["bindings"]:
    mid = (int(b["service"], 16) << 16) | int(b.get("method", b.get("event")), 16)
    ours[mid] += ("txPdu" in b) + ("rxPdu" in b)
print("  canmatrix:", {hex(k): v for k, v in sorted(theirs.items())})
print("  layersec: ", {hex(k): v for k, v in sorted(ours.items())})
sys.exit(0 if theirs == ours and sum(ours.values()) == 3 else 1)
PY
  echo "ok: echo_$name.arxml: canmatrix finds the Message IDs of the 3 secured PDUs that the import bound"
done

# 2. canmatrix's own ARXML (written from what it read) has nothing the import uses.
/usr/bin/python3 - "$SRC/testdata/arxml/echo_server.arxml" "$WORK/canmatrix.arxml" <<'PY' || fail "canmatrix could not write ARXML"
import logging, sys
logging.disable(logging.CRITICAL)
import canmatrix.formats
canmatrix.formats.dumpp(canmatrix.formats.loadp(sys.argv[1], decode_ethernet=True), sys.argv[2])
PY
echo "  canmatrix wrote: $(grep -o '<[A-Z0-9-]*CLUSTER>' "$WORK/canmatrix.arxml" | sort -u | tr '\n' ' ')"
st=0
"$LS" config import-arxml "$WORK/canmatrix.arxml" --out "$WORK/from-canmatrix" >"$WORK/out" 2>"$WORK/err" || st=$?
[[ $st -eq 2 ]] || fail "import of canmatrix's ARXML: status $st, want 2"
grep -q 'canmatrix.arxml: .*no PROVIDED-SOMEIP-SERVICE-INSTANCE or REQUIRED-SOMEIP-SERVICE-INSTANCE' "$WORK/err" \
  || fail "import of canmatrix's ARXML: no message naming what is missing"
[[ ! -e "$WORK/from-canmatrix" ]] || fail "output written for canmatrix's ARXML"
echo "ok: canmatrix's own ARXML (CAN frames, no SOME/IP or SecOC) is refused with status 2, nothing written"
echo "PASS"
