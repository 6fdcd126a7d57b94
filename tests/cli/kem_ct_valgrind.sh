#!/usr/bin/env bash
# Constant-time evidence for our ML-KEM: runs `layersec kem ct-check` under
# valgrind memcheck with d, z, m and the secret parts of dk marked undefined
# (VALGRIND_MAKE_MEM_UNDEFINED); any branch or memory index that depends on
# them makes valgrind exit with status 1. A negative control first proves that
# a deliberate branch on a marked secret is caught.
set -euo pipefail
LAYERSEC=${1:?usage: kem_ct_valgrind.sh /path/to/layersec}

if ! command -v valgrind >/dev/null 2>&1; then
  echo "SKIP: valgrind is not installed; the constant-time check did not run"
  exit 77
fi
if grep -q -a "AddressSanitizer" "$LAYERSEC" 2>/dev/null; then
  echo "SKIP: $LAYERSEC is built with AddressSanitizer, which cannot run under valgrind;"
  echo "      run this test from a non-sanitizer build (e.g. Release) for the constant-time check"
  exit 77
fi

VG=(valgrind --error-exitcode=1 --quiet --track-origins=yes)

# Negative control: the instrumentation must see a secret-dependent branch.
if "${VG[@]}" "$LAYERSEC" kem ct-check --scheme ml-kem-768 --leak-control >/tmp/kem_ct_control.$$ 2>&1; then
  cat /tmp/kem_ct_control.$$
  rm -f /tmp/kem_ct_control.$$
  echo "FAIL: valgrind did not report the deliberate secret-dependent branch (is the client request compiled in?)"
  exit 1
fi
if ! grep -q "uninitialised value" /tmp/kem_ct_control.$$; then
  cat /tmp/kem_ct_control.$$
  rm -f /tmp/kem_ct_control.$$
  echo "FAIL: negative control failed for another reason"
  exit 1
fi
rm -f /tmp/kem_ct_control.$$
echo "ok: negative control (deliberate branch on a secret) is reported by memcheck"

for scheme in ml-kem-512 ml-kem-768 ml-kem-1024; do
  if ! "${VG[@]}" "$LAYERSEC" kem ct-check --scheme "$scheme" --iterations 2; then
    echo "FAIL: $scheme: secret-dependent branch or index reported by valgrind (see above)"
    exit 1
  fi
  echo "ok: $scheme keygen/encaps/decaps (incl. implicit rejection): no secret-dependent branch or index"
done
