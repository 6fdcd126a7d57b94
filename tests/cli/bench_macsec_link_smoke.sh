#!/usr/bin/env bash
# Smoke test of `layersec bench macsec-link`: one short run (1 s per iperf3
# run, TCP and UDP at 512 octets) through two `layersec macsec up` processes,
# with the TAP offloads and with --no-offload, and over the plain veth.
# Asserts that every row exists with the fields the JSON promises, that both
# paths carried traffic, that the MACsec rows have a ratio and the links' CPU,
# that the links verified what they delivered (no ICV failure, no protect or
# offload error), and that the offload round split TCP segments from the TAP
# and the --no-offload round did not. No timing assertions (a shared machine).
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
keys = ["path", "offload", "proto", "bytes", "gbit_s", "cpu_pct_per_gbit", "ratio", "loss_pct", "cpu_pct", "system_cpu_pct"]
for r in rows:
    missing = [k for k in keys if k not in r]
    if missing: fail("row %s/%s lacks %s" % (r.get("path"), r.get("proto"), missing))
want = {("plain", None, "tcp", 131072), ("plain", None, "udp", 512)}
for off in (True, False):
    want |= {("macsec", off, "tcp", 131072), ("macsec", off, "udp", 512)}
got = {(r["path"], r["offload"], r["proto"], r["bytes"]) for r in rows}
if got != want or len(rows) != 6: fail("rows %s, expected %s" % (sorted(got, key=str), sorted(want, key=str)))
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
for rnd in ("offload", "no_offload"):
    for side in ("a", "b"):
        s = j["links"][rnd][side]
        if s is None: fail("no exit statistics of link %s (%s)" % (side, rnd))
        if s["secy"]["InPktsOK"] == 0 or s["link"]["rx_delivered"] == 0: fail("link %s (%s) delivered nothing" % (side, rnd))
        for k in ("InPktsNotValid", "InPktsLate", "InPktsBadTag"):
            if s["secy"][k] != 0: fail("link %s (%s) counted %s %d" % (side, rnd, k, s["secy"][k]))
        for k in ("tx_protect_errors", "tx_offload_errors"):
            if s["link"][k] != 0: fail("link %s (%s): %s %d" % (side, rnd, k, s["link"][k]))
        if "rx_ring_drops" not in s["link"]: fail("link %s (%s): no rx_ring_drops counter" % (side, rnd))
        if s["link"]["rx_delivered"] + s["link"]["rx_deliver_errors"] != s["secy"]["InPktsOK"]:
            fail("link %s (%s): delivered (joined or not) + refused != InPktsOK" % (side, rnd))
    # The iperf3 client sends its TCP stream from a: with offloads its TAP
    # hands over segments of several MSS, without them never.
    gso = j["links"][rnd]["a"]["link"]["tx_gso_reads"]
    if (gso > 0) != (rnd == "offload"): fail("link a (%s): tx_gso_reads %d" % (rnd, gso))
    if rnd == "no_offload" and j["links"][rnd]["b"]["link"]["rx_gro_writes"] != 0: fail("joined segments without offload")
if "met" not in j["goals"]: fail("no goal verdict")
for t in [r for r in rows if r["path"] == "macsec" and r["proto"] == "tcp"]:
    print("ok: TCP macsec offload %s %.2f Gbit/s (%.2fx plain), links %.0f %% CPU, %.1f %%/Gbit" % (t["offload"], t["gbit_s"], t["ratio"], t["cpu_pct"], t["cpu_pct_per_gbit"]))
PY
echo "PASS: bench_macsec_link_smoke"
