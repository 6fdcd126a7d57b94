#!/usr/bin/env bash
# Cross-checks layersec's Chaskey / Chaskey-12 against an independent
# pure-Python implementation (tests/crypto_xcheck/chaskey_ref.py, written from
# the paper): the Python first reproduces the published vectors, then
# generates 1000 random key/message/tag-length cases per round count, and
# `layersec selftest --chaskey-xcheck` must reproduce every tag through
# Chaskey::mac(), the incremental interface and make_mac().
# Usage: chaskey_xcheck.sh /path/to/layersec
set -euo pipefail
LAYERSEC="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=/usr/bin/python3
VECTORS="${LAYERSEC_VECTORS_DIR:-$ROOT/../shared/vectors}"
REF="$ROOT/tests/crypto_xcheck/chaskey_ref.py"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$PY" "$REF" --self-test "$VECTORS/chaskey/chaskey_vectors.json"
"$PY" "$REF" --gen 1000 --seed 20261130 > "$tmp/cases.txt"
lines=$(wc -l < "$tmp/cases.txt")
if [ "$lines" -ne 2000 ]; then
  echo "FAIL: expected 2000 generated cases, got $lines" >&2
  exit 1
fi
grep -c '^8 ' "$tmp/cases.txt" | grep -qx 1000
grep -c '^12 ' "$tmp/cases.txt" | grep -qx 1000

out="$("$LAYERSEC" selftest --chaskey-xcheck "$tmp/cases.txt")"
echo "$out"
echo "$out" | grep -q "chaskey xcheck: 2000 cases, 0 mismatches"

# The checker must notice a wrong tag: flip one hex digit of one tag.
awk 'NR==500 { t=$4; c=substr(t,1,1); c=(c=="0")?"1":"0"; $4=c substr(t,2) } { print }' \
  "$tmp/cases.txt" > "$tmp/bad.txt"
if "$LAYERSEC" selftest --chaskey-xcheck "$tmp/bad.txt" > "$tmp/bad.out" 2>&1; then
  echo "FAIL: a corrupted tag was not detected" >&2
  exit 1
fi
grep -q "1 mismatches" "$tmp/bad.out"
echo "PASS chaskey_xcheck"
