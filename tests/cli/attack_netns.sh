#!/usr/bin/env bash
# `layersec attack --topology netns` (issue 15): real `layersec node` and
# `layersec macsec up` processes in network namespaces, an AF_PACKET attacker
# between them. A 200-attempt run must exit 0 with a JSON report that has
# every netns class of every configuration, no failed row, nothing accepted
# in the secured configurations while the unsecured SOME/IP baseline accepts
# (so the attacks are seen to work), legitimate traffic delivered beside each
# attack, and leave no namespace or work directory behind. Then a run interrupted with SIGTERM must clean up as well, and a
# bad --topology exits 2. Root only; skips otherwise (the binary itself
# exits 77 with the reason when namespaces are unavailable).
# Usage: bash tests/cli/attack_netns.sh /path/to/layersec
set -euo pipefail
bin="${1:?usage: $0 /path/to/layersec}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib/netns.sh"
netns_require attack_netns "network namespaces, AF_PACKET" ip
netns_init attack_netns

# leftovers PID: namespaces or work directories of run PID still present.
leftovers() {
  ip netns list | grep -E "^lsatk[smuv]$1[abx]( |$)" || true
}
workdirs() { find /tmp -maxdepth 1 -name 'layersec-attack-netns-*' 2>/dev/null | wc -l; }

dirs_before="$(workdirs)"
st=0
timeout 240 "$bin" attack --topology netns --attempts 200 --json "$work/attack.json" \
  >"$work/run.out" 2>"$work/run.err" &
pid=$!
wait "$pid" || st=$?
if [[ $st -eq 77 ]]; then
  echo "SKIP: $(tail -n 1 "$work/run.err")"
  exit 0
fi
[[ $st -eq 0 ]] || fail "layersec attack --topology netns exited $st"
grep -q "rows, 0 failed" "$work/run.out" || fail "no '0 failed' summary line"
[[ -z "$(leftovers "$pid")" ]] || fail "namespaces left behind: $(leftovers "$pid")"
[[ "$(workdirs)" -le "$dirs_before" ]] || fail "a work directory was left in /tmp"

/usr/bin/python3 - "$work/attack.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
want = {
    "netns-someip-unsecured": ["N.replay", "N.tamper.someip-header", "N.tamper.payload", "N.forge", "N.relabel",
                               "N.sd-spoof"],
    "netns-secoc-vendor": ["N.replay", "N.tamper.someip-header", "N.tamper.payload", "N.tamper.fv-mac",
                           "N.forge", "N.relabel", "N.sd-spoof", "N.restart"],
    "netns-macsec-gcm-aes-128": ["N.lower-inject", "N.macsec-replay", "N.tamper"],
    "netns-sv-62351-hmac-sha256": ["N.sv-replay", "N.sv-tamper", "N.sv-forge", "N.sv-restart"],
}
have = {(r["configuration"], r["class"]): r for r in rows}
for cfg, classes in want.items():
    for c in classes:
        assert (cfg, c) in have, f"no row {cfg} {c} (have {sorted(have)})"
for r in rows:
    name = f'{r["configuration"]} {r["class"]}'
    assert r["note"], f"{name}: empty note"
    assert r["failed"] is False, f"{name}: failed"
    assert r["attempts"] == 200, f"{name}: {r['attempts']} attempts"
    assert r["legit_delivered"] > 0, f"{name}: no legitimate traffic delivered"
    if r["configuration"] == "netns-someip-unsecured":
        assert r["acceptance_expected"], f"{name}: the baseline is not marked unsecured"
        if r["class"] != "N.tamper.someip-header":  # some header flips are dropped by the parser
            assert r["accepted"] > 0, f"{name}: the unsecured baseline accepted nothing (the attack does not work)"
        continue
    assert not r["acceptance_expected"], f"{name}: a secured row marked as unsecured"
    assert r["accepted"] == 0, f"{name}: {r['accepted']} accepted"
    assert r["rejected_total"] > 0, f"{name}: nothing rejected"
    if not r["loss_allowed"]:
        assert r["legit_lost"] == 0, f"{name}: {r['legit_lost']} legitimate lost"
print(f"ok: {len(rows)} rows, every class present, 0 accepted where secured, the baseline accepts")
PY
echo "ok: no namespace or work directory left after the run"

# The soak against the real processes, briefly: an N.soak row per
# configuration, nothing accepted, everything delivered after the load,
# resident memory flat. In a sanitizer build AddressSanitizer keeps freed
# memory in its quarantine (up to 256 MiB by design), which is not the
# receiver's memory: the soak runs with the quarantine off there, so the
# RSS check sees what the code holds.
source "$HERE/lib/sanitizer.sh"
if sanitizer_build "$bin"; then export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"; fi
timeout 240 "$bin" attack --topology netns --layer macsec --attempts 50 --soak-seconds 3 \
  --json "$work/soak_m.json" >"$work/soak_m.out" 2>&1 || fail "netns macsec soak failed: $(tail -n 5 "$work/soak_m.out")"
timeout 240 "$bin" attack --topology netns --layer sv --attempts 50 --soak-seconds 3 \
  --json "$work/soak_s.json" >"$work/soak_s.out" 2>&1 || fail "netns sv soak failed: $(tail -n 5 "$work/soak_s.out")"
/usr/bin/python3 - "$work/soak_m.json" "$work/soak_s.json" <<'PY'
import json, re, sys
for path in sys.argv[1:]:
    rows = [r for r in json.load(open(path))["rows"] if r["class"] == "N.soak"]
    assert len(rows) == 1, f"{path}: {len(rows)} N.soak rows"
    r = rows[0]
    assert r["attempts"] > 1000, f"{r['configuration']}: only {r['attempts']} attack frames"
    assert r["accepted"] == 0 and not r["failed"], f"{r['configuration']}: accepted {r['accepted']}"
    assert r["legit_lost"] == 0, f"{r['configuration']}: {r['legit_lost']} lost after the load: {r['note']}"
    m = re.search(r"RSS start/max/end ([0-9.]+)/([0-9.]+)/([0-9.]+) MiB", r["note"])
    assert m and float(m.group(1)) > 0, f"{r['configuration']}: no RSS in the note: {r['note']}"
    assert float(m.group(3)) < float(m.group(1)) + 16, f"{r['configuration']}: RSS grew: {r['note']}"
    print(f"ok: {r['configuration']} N.soak: {r['attempts']} attack frames, 0 accepted; {r['note']}")
PY
unset ASAN_OPTIONS

# Interrupted half-way: SIGTERM, and still nothing left behind.
timeout 60 "$bin" attack --topology netns --attempts 5000 >"$work/int.out" 2>"$work/int.err" &
pid=$!
sleep 4
kill -TERM "$pid"
st=0
wait "$pid" || st=$?
[[ $st -ne 0 ]] || fail "an interrupted run exited 0"
[[ -z "$(leftovers "$pid")" ]] || fail "namespaces left behind after SIGTERM: $(leftovers "$pid")"
[[ "$(workdirs)" -le "$dirs_before" ]] || fail "a work directory was left after SIGTERM"
grep -q "interrupted" "$work/int.err" || fail "the interrupted run did not say so: $(tail -n 3 "$work/int.err")"
echo "ok: SIGTERM after 4 s: exit $st, nothing left behind"

st=0
"$bin" attack --topology mesh >"$work/bad.out" 2>"$work/bad.err" || st=$?
[[ $st -eq 2 ]] || fail "--topology mesh exited $st"
grep -q -- "--topology" "$work/bad.err" || fail "the message does not name --topology"
echo "PASS"
