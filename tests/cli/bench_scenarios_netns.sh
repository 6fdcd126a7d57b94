#!/usr/bin/env bash
# Smoke run of `layersec bench scenarios --topology netns --quick` (every node
# its own process in its own network namespace, harness/netns_scenarios.h):
# the JSON has rows for both link paths (kernel, raw), every closed-loop row
# completed all 30 iterations with no timeout and no security rejection, the
# ratios compare rows of the same path, and the run leaves no network
# namespace behind. Needs root and iproute2; skips with a reason otherwise.
# Usage: bash tests/cli/bench_scenarios_netns.sh /path/to/layersec
set -euo pipefail

LS="${1:?usage: $0 /path/to/layersec}"

if [[ "$(id -u)" -ne 0 ]]; then
  echo "SKIP: bench_scenarios_netns needs root (network namespaces)"
  exit 0
fi
if ! command -v ip >/dev/null; then
  echo "SKIP: iproute2 'ip' is not installed"
  exit 0
fi

WORK="$(mktemp -d)"
cleanup() {
  if [[ -n "${KEEP_WORK:-}" ]]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  echo "--- stdout (tail)"
  tail -n 60 "$WORK/stdout" 2>/dev/null || true
  echo "--- stderr (tail)"
  tail -n 60 "$WORK/stderr" 2>/dev/null || true
  exit 1
}

ip netns list | awk '{print $1}' | sort >"$WORK/netns.before"
status=0
"$LS" bench scenarios --topology netns --quick --iterations 30 --json "$WORK/netns.json" \
  --work-dir "$WORK/nodes" >"$WORK/stdout" 2>"$WORK/stderr" &
run_pid=$!
wait "$run_pid" || status=$?
ip netns list | awk '{print $1}' | sort >"$WORK/netns.after"

if [[ "$status" -eq 2 ]] && grep -q "needs network namespaces" "$WORK/stderr"; then
  echo "SKIP: $(grep -m1 'needs network namespaces' "$WORK/stderr")"
  exit 0
fi
[[ "$status" -eq 0 ]] || fail "bench scenarios --topology netns exited with $status"

# The run's namespaces are named lsb<pid>x<n>...: none may be left, and no
# other lsb namespace may have appeared (other tests may add their own).
if grep -q "^lsb${run_pid}x" "$WORK/netns.after"; then
  fail "namespaces left behind: $(grep "^lsb${run_pid}x" "$WORK/netns.after" | tr '\n' ' ')"
fi
if comm -13 "$WORK/netns.before" "$WORK/netns.after" | grep -q '^lsb[0-9]'; then
  fail "new lsb namespaces after the run: $(comm -13 "$WORK/netns.before" "$WORK/netns.after" | tr '\n' ' ')"
fi

grep -q "goal \[netns-kernel\]" "$WORK/stdout" || fail "no goal line for the kernel path"
grep -q "goal \[netns-raw\]" "$WORK/stdout" || fail "no goal line for the raw path"
grep -q "saturation \[netns-raw\]" "$WORK/stdout" || fail "no saturation line for the raw path"

/usr/bin/python3 - "$WORK/netns.json" <<'PY' || fail "JSON check"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["scenarios"]
assert any("MACsec in netns is end to end" in n for n in doc["run"]["notes"]), doc["run"]["notes"]
by_name = {r["name"]: r for r in rows}
paper = ["unsecured", "secoc-psk", "secoc-rsa", "hybrid-psk", "hybrid-rsa"]
for path in ("kernel", "raw"):
    topo = "netns-" + path
    mine = [r for r in rows if r["topology"] == topo]
    assert mine, f"no rows for {topo}"
    for r in mine:
        assert r["name"].endswith("@" + path), r["name"]
        assert not r["notes"].startswith("FAILED"), (r["name"], r["notes"])
        assert r["security_rejections"] == 0, (r["name"], r["security_rejections"])
        if r["series"] == "rate":
            continue
        assert r["iterations"] == 30 and r["completed"] == 30 and r["timeouts"] == 0, (
            r["name"], r["iterations"], r["completed"], r["timeouts"])
        assert 0 < r["min_us"] <= r["p50_us"] <= r["p99_us"] <= r["max_us"], r["name"]
        if r["security"] != "none":
            assert r["secoc_path_us"] > 0, (r["name"], r["secoc_path_us"])
        assert r["cpu_pct"] > 0 and r["rss_kib"] > 0, r["name"]
        # Every ratio is against the unsecured row of the same path.
        if r["baseline_p99_us"] is not None:
            bases = [b for b in mine if b["security"] == "none" and b["series"] == r["series"]
                     and abs(b["p99_us"] - r["baseline_p99_us"]) < 1e-9]
            assert bases, (r["name"], r["baseline_p99_us"])
    for p in paper:
        for d, pid in (("unicast", "A"), ("multicast", "B")):
            name = f"{p}-{d}@{path}"
            assert name in by_name, name
            r = by_name[name]
            assert r["paper_id"].endswith("-" + pid) and r["paper"] is not None, name
            assert r["subscribers"] == (2 if d == "multicast" else 1), name
    assert by_name[f"hybrid-psk-multicast@{path}"]["ratio_p99"] is not None
    assert by_name[f"secoc-rsa-unicast@{path}"]["establishment_ms"] is not None
    assert any(r["series"] == "group-size" for r in mine), f"no group rows for {topo}"
    assert any(r["series"] == "rate" for r in mine), f"no rate rows for {topo}"
print("ok: %d rows, both paths" % len(rows))
PY
echo "ok: bench scenarios --topology netns --quick, both paths, no namespace left behind"
