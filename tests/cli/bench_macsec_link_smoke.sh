#!/usr/bin/env bash
# Smoke test of `layersec bench macsec-link`: one short run (1 s per iperf3
# run, TCP and UDP at 512 octets) through two `layersec macsec up` processes
# and over the plain veth. Asserts that every row exists with the fields the
# JSON promises, that both paths carried traffic, that the MACsec rows have a
# ratio and the links' CPU, and that the links verified what they delivered
# (no ICV failure, no protect error). No timing assertions (a shared machine).
# Root and iperf3 only: exits 77 with the reason otherwise.
# Usage: bash tests/cli/bench_macsec_link_smoke.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: bench_macsec_link_smoke needs root (network namespaces, TAP, AF_PACKET)"; exit 77; fi
for tool in ip iperf3 /usr/bin/python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
[[ -c /dev/net/tun ]] || { echo "SKIP: no /dev/net/tun"; exit 77; }

work="$(mktemp -d /tmp/bench_macsec_link_smoke.XXXXXX)"
trap 'rm -rf "$work"' EXIT
"$layersec" bench macsec-link --seconds 1 --udp-sizes 512 --json "$work/link.json" >"$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; echo "FAIL: layersec bench macsec-link exited with an error"; exit 1; }
cat "$work/out.txt"
grep -q "ratio" "$work/out.txt" || { echo "FAIL: the table has no ratio column"; exit 1; }
/usr/bin/python3 - "$work/link.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
def fail(m):
    print("FAIL: " + m); sys.exit(1)
rows = j["rows"]
keys = ["path", "proto", "bytes", "gbit_s", "cpu_pct_per_gbit", "ratio", "loss_pct", "cpu_pct", "system_cpu_pct"]
for r in rows:
    missing = [k for k in keys if k not in r]
    if missing: fail("row %s/%s lacks %s" % (r.get("path"), r.get("proto"), missing))
want = {("plain", "tcp", 131072), ("plain", "udp", 512), ("macsec", "tcp", 131072), ("macsec", "udp", 512)}
got = {(r["path"], r["proto"], r["bytes"]) for r in rows}
if got != want or len(rows) != 4: fail("rows %s, expected %s" % (sorted(got), sorted(want)))
for r in rows:
    if not r["gbit_s"] > 0: fail("%s/%s carried nothing" % (r["path"], r["proto"]))
    if r["path"] == "macsec":
        if r["ratio"] is None or r["cpu_pct"] is None or r["cpu_pct_per_gbit"] is None:
            fail("macsec row without ratio or CPU: %s" % r)
        if not (r["cpu_pct"] > 0 and abs(r["cpu_pct_per_gbit"] - r["cpu_pct"] / r["gbit_s"]) < 1e-6 * max(1, r["cpu_pct_per_gbit"])):
            fail("inconsistent CPU figures: %s" % r)
    else:
        if r["ratio"] is not None or r["cpu_pct"] is not None: fail("plain row with link figures: %s" % r)
    if r["proto"] == "udp" and r["loss_pct"] is None: fail("UDP row without loss")
for side in ("a", "b"):
    s = j["links"][side]
    if s is None: fail("no exit statistics of link %s" % side)
    if s["secy"]["InPktsOK"] == 0 or s["link"]["rx_delivered"] == 0: fail("link %s delivered nothing" % side)
    for k in ("InPktsNotValid", "InPktsLate", "InPktsBadTag"):
        if s["secy"][k] != 0: fail("link %s counted %s %d" % (side, k, s["secy"][k]))
    if s["link"]["tx_protect_errors"] != 0: fail("link %s: protect errors" % side)
if "met" not in j["goals"]: fail("no goal verdict")
t = [r for r in rows if r["path"] == "macsec" and r["proto"] == "tcp"][0]
print("ok: TCP macsec %.2f Gbit/s (%.2fx plain), links %.0f %% CPU, %.1f %%/Gbit" % (t["gbit_s"], t["ratio"], t["cpu_pct"], t["cpu_pct_per_gbit"]))
PY
echo "PASS: bench_macsec_link_smoke"
