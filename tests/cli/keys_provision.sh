#!/usr/bin/env bash
# End-to-end provisioning with `layersec keys`: CA, ECU certificates with
# service ids, show, verify, and the refusals (loose key file mode, unknown
# service, wrong CA, expired certificate). Usage: keys_provision.sh /path/to/layersec
set -u
LAYERSEC=${1:?usage: $0 /path/to/layersec}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/layersec_keys.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILS=0
pass() { echo "ok   - $1"; }
fail() { echo "FAIL - $1"; FAILS=$((FAILS + 1)); }
# expect CODE DESCRIPTION -- command...
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$WORK/out" 2>"$WORK/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass "$what"; else
    fail "$what (exit $got, wanted $want)"; cat "$WORK/out" "$WORK/err"; fi
}
mode_of() { stat -c %a "$1"; }

# --- CA ---------------------------------------------------------------------
expect 0 "create vehicle CA (p256)" -- "$LAYERSEC" keys ca --out "$WORK/ca" --name vehicle-ca --days 30
[ "$(mode_of "$WORK/ca/ca.key")" = 600 ] && pass "ca.key is 0600" || fail "ca.key mode $(mode_of "$WORK/ca/ca.key")"
[ "$(mode_of "$WORK/ca/ca.pem")" = 644 ] && pass "ca.pem is 0644" || fail "ca.pem mode"
grep -q "BEGIN PRIVATE KEY" "$WORK/ca/ca.key" && pass "ca.key is PKCS#8 PEM" || fail "ca.key format"
expect 0 "create substation CA (ed25519)" -- "$LAYERSEC" keys ca --out "$WORK/sub" --name substation-ca --kind substation --alg ed25519
expect 2 "RSA CA refused as usage error" -- "$LAYERSEC" keys ca --out "$WORK/x" --name x --alg rsa2048
expect 1 "existing CA not overwritten" -- "$LAYERSEC" keys ca --out "$WORK/ca" --name again

# --- issue ------------------------------------------------------------------
expect 0 "issue brake ECU (rsa2048) for 0x1234,0x5678" -- \
  "$LAYERSEC" keys issue --ca "$WORK/ca" --out "$WORK/ecu" --name brake --services 0x1234,0x5678
[ "$(mode_of "$WORK/ecu/brake.key")" = 600 ] && pass "brake.key is 0600" || fail "brake.key mode"
expect 0 "issue body ECU (p256)" -- \
  "$LAYERSEC" keys issue --ca "$WORK/ca" --out "$WORK/ecu" --name body --services 4660 --alg p256
expect 0 "issue IED (ed25519) under the substation CA" -- \
  "$LAYERSEC" keys issue --ca "$WORK/sub" --out "$WORK/ied" --name ied-1 --services 0x4000 --alg ed25519
expect 2 "bad service id refused" -- \
  "$LAYERSEC" keys issue --ca "$WORK/ca" --out "$WORK/ecu" --name bad --services 0x12345

# --- show -------------------------------------------------------------------
expect 0 "show brake certificate" -- "$LAYERSEC" keys show --cert "$WORK/ecu/brake.pem"
grep -q "^services: *0x1234,0x5678$" "$WORK/out" && pass "show lists services" || { fail "services line"; cat "$WORK/out"; }
grep -q "CN=brake" "$WORK/out" && grep -q "CN=vehicle-ca" "$WORK/out" && pass "show prints subject and issuer" || fail "subject/issuer"
grep -q "^not after:" "$WORK/out" && pass "show prints validity" || fail "validity"
if grep -qi "PRIVATE" "$WORK/out" "$WORK/err"; then fail "show printed key material"; else pass "show prints no key"; fi
"$LAYERSEC" keys show --cert "$WORK/ied/ied-1.pem" >"$WORK/out" 2>&1
grep -q "OU=IED" "$WORK/out" && pass "substation nodes are IEDs" || fail "IED OU"

# --- verify -----------------------------------------------------------------
expect 0 "verify brake for 0x1234" -- "$LAYERSEC" keys verify --ca "$WORK/ca" --cert "$WORK/ecu/brake.pem" --service 0x1234
expect 0 "verify with key match" -- "$LAYERSEC" keys verify --ca "$WORK/ca/ca.pem" --cert "$WORK/ecu/body.pem" --key "$WORK/ecu/body.key"
expect 1 "unauthorised service refused" -- "$LAYERSEC" keys verify --ca "$WORK/ca" --cert "$WORK/ecu/brake.pem" --service 0x9999
grep -q "not authorised" "$WORK/err" && pass "unauthorised reason printed" || fail "reason"
expect 1 "wrong CA refused" -- "$LAYERSEC" keys verify --ca "$WORK/sub" --cert "$WORK/ecu/brake.pem"
grep -q "trusted CA" "$WORK/err" && pass "wrong-CA reason printed" || fail "wrong-CA reason"
expect 1 "mismatched key refused" -- "$LAYERSEC" keys verify --ca "$WORK/ca" --cert "$WORK/ecu/brake.pem" --key "$WORK/ecu/body.key"
now=$(date +%s)
expect 0 "issue an already expired ECU" -- "$LAYERSEC" keys issue --ca "$WORK/ca" --out "$WORK/ecu" --name old \
  --services 0x1234 --alg p256 --not-before $((now - 864000)) --not-after $((now - 86400))
expect 1 "expired certificate refused" -- "$LAYERSEC" keys verify --ca "$WORK/ca" --cert "$WORK/ecu/old.pem"
grep -q "expired" "$WORK/err" && pass "expired reason printed" || fail "expired reason"
expect 1 "not yet valid at an earlier time" -- "$LAYERSEC" keys verify --ca "$WORK/ca" --cert "$WORK/ecu/brake.pem" --at $((now - 86400 * 2))
printf 'not a certificate\n' >"$WORK/garbage.pem"
expect 1 "malformed certificate refused" -- "$LAYERSEC" keys verify --ca "$WORK/ca" --cert "$WORK/garbage.pem"

# --- certify an existing key (e.g. a pre-generated RSA-15360 key) -----------
if command -v openssl >/dev/null; then
  (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/pregen.pem" 2>/dev/null)
  expect 0 "issue for a pre-generated key" -- "$LAYERSEC" keys issue --ca "$WORK/ca" --out "$WORK/ecu" --name pregen \
    --services 0x1234 --key "$WORK/pregen.pem"
  expect 0 "pre-generated key matches its certificate" -- "$LAYERSEC" keys verify --ca "$WORK/ca" \
    --cert "$WORK/ecu/pregen.pem" --key "$WORK/ecu/pregen.key" --service 0x1234
  chmod 0644 "$WORK/pregen.pem"
  expect 1 "loose pre-generated key refused" -- "$LAYERSEC" keys issue --ca "$WORK/ca" --out "$WORK/ecu" --name pregen2 \
    --services 0x1234 --key "$WORK/pregen.pem"
fi

# --- key file permissions ---------------------------------------------------
chmod 0644 "$WORK/ca/ca.key"
expect 1 "CA key with mode 0644 refused" -- \
  "$LAYERSEC" keys issue --ca "$WORK/ca" --out "$WORK/ecu" --name door --services 0x1234 --alg p256
grep -q "chmod 600" "$WORK/err" && pass "loose-mode reason printed" || { fail "loose-mode reason"; cat "$WORK/err"; }
[ ! -e "$WORK/ecu/door.pem" ] && pass "nothing issued with a loose CA key" || fail "issued despite loose key"
chmod 0600 "$WORK/ca/ca.key"
chmod 0640 "$WORK/ecu/body.key"
expect 1 "node key with mode 0640 refused" -- "$LAYERSEC" keys verify --ca "$WORK/ca" --cert "$WORK/ecu/body.pem" --key "$WORK/ecu/body.key"
ln -s "$WORK/ca/ca.key" "$WORK/link.key"
expect 1 "symlinked key refused" -- "$LAYERSEC" keys verify --ca "$WORK/ca" --cert "$WORK/ecu/body.pem" --key "$WORK/link.key"
chmod 0600 "$WORK/ecu/body.key"

# --- interoperability: OpenSSL accepts our certificates --------------------
if command -v openssl >/dev/null; then
  if openssl verify -CAfile "$WORK/ca/ca.pem" "$WORK/ecu/brake.pem" >/dev/null 2>&1; then
    pass "openssl verify accepts the ECU certificate"; else fail "openssl verify"; fi
fi

# --- Mode B between provisioned identities -----------------------------------
expect 0 "issue gateway (publisher, p256) for 0x1234" -- \
  "$LAYERSEC" keys issue --ca "$WORK/ca" --out "$WORK/ecu" --name gateway --services 0x1234 --alg p256
expect 0 "issue window ECU (rsa2048) for 0x5678 only" -- \
  "$LAYERSEC" keys issue --ca "$WORK/ca" --out "$WORK/ecu" --name window --services 0x5678
expect 0 "Mode B (rsa-2048) gateway <- brake for 0x1234" -- \
  "$LAYERSEC" keys establish --ca "$WORK/ca" --publisher "$WORK/ecu/gateway" --subscriber "$WORK/ecu/brake" --service 0x1234
grep -q "^established: service 0x1234" "$WORK/out" && pass "key established (key id printed)" || { fail "established line"; cat "$WORK/out"; }
expect 1 "Mode B for an unauthorised service refused" -- \
  "$LAYERSEC" keys establish --ca "$WORK/ca" --publisher "$WORK/ecu/gateway" --subscriber "$WORK/ecu/window" --service 0x1234
grep -q "not authorised" "$WORK/err" && pass "handshake refusal names the reason" || { fail "handshake reason"; cat "$WORK/err"; }
expect 1 "Mode B with a p256 subscriber and the RSA KEM refused" -- \
  "$LAYERSEC" keys establish --ca "$WORK/ca" --publisher "$WORK/ecu/gateway" --subscriber "$WORK/ecu/body" --service 0x1234
grep -q "RSA KEM size" "$WORK/err" && pass "KEM/certificate mismatch named" || { fail "mismatch reason"; cat "$WORK/err"; }
expect 0 "Mode B (x25519) with the p256 subscriber" -- \
  "$LAYERSEC" keys establish --ca "$WORK/ca" --publisher "$WORK/ecu/gateway" --subscriber "$WORK/ecu/body" --service 0x1234 --kem x25519
expect 1 "Mode B across CAs refused" -- \
  "$LAYERSEC" keys establish --ca "$WORK/sub" --publisher "$WORK/ecu/gateway" --subscriber "$WORK/ecu/brake" --service 0x1234
chmod 0644 "$WORK/ecu/brake.key"
expect 1 "Mode B with a 0644 subscriber key refused" -- \
  "$LAYERSEC" keys establish --ca "$WORK/ca" --publisher "$WORK/ecu/gateway" --subscriber "$WORK/ecu/brake" --service 0x1234
grep -q "chmod 600" "$WORK/err" && pass "loose subscriber key named" || { fail "loose key reason"; cat "$WORK/err"; }
chmod 0600 "$WORK/ecu/brake.key"
if grep -qi "PRIVATE KEY" "$WORK/out" "$WORK/err"; then fail "establish printed key material"; else pass "establish prints no key"; fi

# --- timing command smoke ------------------------------------------------------
expect 0 "Mode B handshake smoke (x25519)" -- "$LAYERSEC" keys handshake --kem x25519 --iterations 3

if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed"; exit 1; fi
echo "all keys_provision checks passed"
