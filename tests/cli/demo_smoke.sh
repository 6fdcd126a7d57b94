#!/usr/bin/env bash
# Runs `layersec demo --quick` into a temporary folder and checks the results:
# results.json holds the ten paper sub-scenarios (1-A .. 3b-B) with sane fields
# (completed == iterations, p50 <= p95 <= p99 <= max, a baseline ratio on
# every row, RSA rows with an establishment time, no security drops), the
# group-size rows exist, results.csv, report.md and report.html (with its
# tables and charts; tests/cli/report_html_chromium.sh renders it) exist, and when gnuplot is
# installed the plots exist and are PNG files; zonal.json has gPTP rows that
# keep ST within its bound and align the gates better than free-running clocks.
# Usage: demo_smoke.sh /path/to/layersec
set -euo pipefail
LAYERSEC="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$LAYERSEC" demo --quick --iterations 15 --seed 3 --out "$tmp/out" > "$tmp/stdout.txt" 2> "$tmp/stderr.txt"; then
  cat "$tmp/stdout.txt" "$tmp/stderr.txt"
  echo "FAIL: layersec demo exited non-zero" >&2
  exit 1
fi
cat "$tmp/stdout.txt"

for f in results.json results.csv report.md report.html; do
  [ -s "$tmp/out/$f" ] || { echo "FAIL: $f missing or empty" >&2; exit 1; }
done
grep -q "paper" "$tmp/out/report.md" || { echo "FAIL: report.md has no paper column" >&2; exit 1; }
for id in table-paper-scenarios-sim table-group-size table-zonal chart-cdf-paper-scenarios chart-group-growth chart-zonal; do
  grep -q "id=\"$id\"" "$tmp/out/report.html" || { echo "FAIL: report.html has no $id" >&2; exit 1; }
done

python3 - "$tmp/out/results.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["scenarios"]
paper = {r["paper_id"]: r for r in rows if r.get("series") == "paper-scenarios"}
want = ["1-A", "1-B", "2a-A", "2a-B", "2b-A", "2b-B", "3a-A", "3a-B", "3b-A", "3b-B"]
missing = [w for w in want if w not in paper]
assert not missing, f"missing scenarios: {missing}"
assert len(paper) == 10, f"expected 10 paper scenarios, got {len(paper)}"
for pid, r in paper.items():
    for k in ("name", "topology", "iterations", "mean_us", "p50_us", "p95_us", "p99_us", "max_us",
              "cpu_pct", "rss_kib", "baseline_p99_us", "ratio_p99", "paper"):
        assert k in r, f"{pid}: field {k} missing"
    assert r["iterations"] == 15, f"{pid}: iterations {r['iterations']}"
    assert r["completed"] == r["iterations"], f"{pid}: completed {r['completed']} of {r['iterations']}"
    assert 0 < r["p50_us"] <= r["p95_us"] <= r["p99_us"] <= r["max_us"], f"{pid}: percentiles out of order"
    assert r["min_us"] <= r["mean_us"] <= r["max_us"], f"{pid}: mean outside [min, max]"
    assert r["ratio_p99"] is not None and r["ratio_p99"] > 0, f"{pid}: no ratio"
    assert r["baseline_p99_us"] is not None and r["baseline_p99_us"] > 0, f"{pid}: no baseline"
    assert r["rss_kib"] > 0, f"{pid}: rss"
    assert r["cpu_pct"] >= 0, f"{pid}: cpu"
    assert r["security_rejections"] == 0, f"{pid}: {r['security_rejections']} security drops"
    assert r["paper"] and r["paper"]["label"] == "paper" and r["paper"]["id"] == pid, f"{pid}: paper figures"
    assert r["subscribers"] == (2 if pid.endswith("B") else 1), f"{pid}: subscribers"
    assert r["payload_bytes"] == 64, f"{pid}: payload"
    secured = not pid.startswith("1-")
    assert (r["secoc_path_us"] > 0) == secured, f"{pid}: SecOC path {r['secoc_path_us']}"
    if pid.startswith(("2b", "3b")):
        assert r["establishment_ms"] and r["establishment_ms"] > 0, f"{pid}: no establishment time"
    else:
        assert r["establishment_ms"] is None, f"{pid}: unexpected establishment time"
for base in ("1-A", "1-B"):
    assert abs(paper[base]["ratio_p99"] - 1.0) < 1e-9, f"{base}: baseline ratio is not 1"
groups = sorted(r["subscribers"] for r in rows if r.get("series") == "group-size" and r["security"] == "hybrid")
assert groups == [1, 2, 4], f"group-size rows: {groups}"
assert len(j["establishment"]) == 4, "establishment table"
print("demo_smoke: results.json OK (10 scenarios, group sizes", groups, ")")
PY

# The zonal section: the ideal rows and, per hop count, a gPTP row and a
# free-running one (simulated, deterministic): gPTP keeps ST within its bound
# and its gates closer than the free-running clocks'.
python3 - "$tmp/out/zonal.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
on = {(r["hops"], r["clock"]): r for r in j["rows"] if r["shaper"] == "on"}
for hops in range(1, 5):
    g, f = on[(hops, "gptp")], on[(hops, "free")]
    assert g["st_lost"] == 0 and g["st_over_bound"] == 0, f"{hops}: gptp row {g}"
    assert g["misalign_max_ns"] < f["misalign_max_ns"], f"{hops}: gptp not better aligned than free-running"
print("demo_smoke: zonal.json OK (gptp and free-running rows for 1-4 hops)")
PY

lines=$(wc -l < "$tmp/out/results.csv")
[ "$lines" -eq $((10 + 6 + 1)) ] || { echo "FAIL: results.csv has $lines lines" >&2; exit 1; }

if command -v gnuplot > /dev/null; then
  for f in cdf_all.png group_size.png cdf_hybrid-psk-multicast.png cdf_unsecured-unicast.png; do
    [ -s "$tmp/out/$f" ] || { echo "FAIL: plot $f missing" >&2; exit 1; }
    head -c 8 "$tmp/out/$f" | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' \
      || { echo "FAIL: $f is not a PNG" >&2; exit 1; }
  done
  echo "demo_smoke: plots OK"
else
  echo "demo_smoke: gnuplot not installed, plots not checked"
fi
echo "demo_smoke: OK"
