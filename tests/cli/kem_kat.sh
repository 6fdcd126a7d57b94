#!/usr/bin/env bash
# Known answers through the CLI: every ML-KEM-768 case of the NIST ACVP subset
# (keyGen from d||z, encapsulation from m, decapsulation incl. implicit
# rejection) and the RFC 9180 X25519 DHKEM vector, via
# `layersec kem keygen|encaps|decaps`; plus typed errors for bad input.
set -euo pipefail
LAYERSEC=${1:?usage: kem_kat.sh /path/to/layersec}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${LAYERSEC_SOURCE_DIR:-$HERE/../..}
VECTORS=${LAYERSEC_VECTORS_DIR:-$SRC/../shared/vectors}
ACVP=$VECTORS/mlkem/mlkem_acvp_subset.json
PY=/usr/bin/python3
[ -f "$ACVP" ] || { echo "FAIL: $ACVP missing"; exit 1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Writes every ML-KEM-768 case field to $TMP/<kind>_<i>_<field> (lower-case hex).
"$PY" - "$ACVP" "$TMP" <<'PYEOF'
import json, sys, os
doc = json.load(open(sys.argv[1]))
out = sys.argv[2]
s = doc["sets"]["ML-KEM-768"]
for kind in ("keyGen", "encapsulation", "decapsulation"):
    for i, tc in enumerate(s[kind]):
        for k, v in tc.items():
            if isinstance(v, str):
                open(os.path.join(out, f"{kind}_{i}_{k}"), "w").write(v.lower())
PYEOF
# Secret inputs given as @FILE are key files (base/keyfile.h): mode 0600.
chmod 600 "$TMP"/*

field() { # field OUTPUT NAME
  printf '%s\n' "$1" | sed -n "s/^$2: //p"
}
expect_eq() { # expect_eq WHAT GOT WANT
  if [ "$2" != "$3" ]; then echo "FAIL: $1"; echo " got:  ${2:0:80}..."; echo " want: ${3:0:80}..."; exit 1; fi
}

n=0
for i in 0 1 2 3 4; do
  d=$(cat "$TMP/keyGen_${i}_d"); z=$(cat "$TMP/keyGen_${i}_z")
  out=$("$LAYERSEC" kem keygen --scheme ml-kem-768 --seed "$d$z" --print-secrets 2>/dev/null)
  expect_eq "keyGen $i ek" "$(field "$out" public_key)" "$(cat "$TMP/keyGen_${i}_ek")"
  expect_eq "keyGen $i dk" "$(field "$out" private_key)" "$(cat "$TMP/keyGen_${i}_dk")"
  n=$((n + 1))
done
for i in 0 1 2 3 4; do
  out=$("$LAYERSEC" kem encaps --scheme ml-kem-768 --pk "@$TMP/encapsulation_${i}_ek" --m "$(cat "$TMP/encapsulation_${i}_m")" --print-secrets 2>/dev/null)
  expect_eq "encapsulation $i c" "$(field "$out" ciphertext)" "$(cat "$TMP/encapsulation_${i}_c")"
  expect_eq "encapsulation $i k" "$(field "$out" shared_secret)" "$(cat "$TMP/encapsulation_${i}_k")"
  n=$((n + 1))
done
rejections=0
for i in 0 1 2 3 4; do
  out=$("$LAYERSEC" kem decaps --scheme ml-kem-768 --sk "@$TMP/decapsulation_${i}_dk" --ct "@$TMP/decapsulation_${i}_c" --print-secrets 2>/dev/null)
  expect_eq "decapsulation $i ($(cat "$TMP/decapsulation_${i}_reason")) k" "$(field "$out" shared_secret)" "$(cat "$TMP/decapsulation_${i}_k")"
  grep -q modified "$TMP/decapsulation_${i}_reason" && rejections=$((rejections + 1))
  n=$((n + 1))
done
[ "$rejections" -gt 0 ] || { echo "FAIL: no implicit-rejection case exercised"; exit 1; }
echo "ok: $n ML-KEM-768 ACVP cases through the CLI ($rejections implicit rejections)"

# RFC 9180 A.1.1 DHKEM(X25519, HKDF-SHA256).
out=$("$LAYERSEC" kem encaps --scheme x25519 --pk 3948cfe0ad1ddb695d780e59077195da6c56506b027329794ab02bca80815c4d \
  --seed 52c4a758a802cd8b936eceea314432798d5baf2d7e9235dc084ab1b9cfa2f736 --print-secrets 2>/dev/null)
expect_eq "x25519 enc" "$(field "$out" ciphertext)" 37fda3567bdbd628e88668c3c8d7e97d1d1253b6d4ea6d44c150f741f1bf4431
expect_eq "x25519 shared_secret" "$(field "$out" shared_secret)" fe0e18c9f024ce43799ae393c7e8fe8fce9d218875e8227b0187c04e7d2ea1fc
out=$("$LAYERSEC" kem decaps --scheme x25519 --sk 4612c550263fc8ad58375df3f557aac531d26850903e55a9f23f21d8534e8ac8 \
  --ct 37fda3567bdbd628e88668c3c8d7e97d1d1253b6d4ea6d44c150f741f1bf4431 --print-secrets 2>/dev/null)
expect_eq "x25519 decaps" "$(field "$out" shared_secret)" fe0e18c9f024ce43799ae393c7e8fe8fce9d218875e8227b0187c04e7d2ea1fc
echo "ok: RFC 9180 A.1.1 X25519 DHKEM through the CLI"

# Round trip for every other scheme (random keys; RSA-15360 keygen excluded).
# No secret is printed: the private key goes to a 0600 key file and the
# shared secrets are compared by their ids.
for scheme in ml-kem-512 ml-kem-1024 ecdh-p256 ecdh-p521 rsa-2048 ntru-ees613ep1 ntru-ees1171ep1 x25519+ml-kem-768; do
  rm -f "$TMP/sk"
  kp=$("$LAYERSEC" kem keygen --scheme "$scheme" --sk-out "$TMP/sk")
  [ "$(stat -c %a "$TMP/sk")" = 600 ] || { echo "FAIL: $scheme --sk-out mode $(stat -c %a "$TMP/sk")"; exit 1; }
  [ -z "$(field "$kp" private_key)" ] || { echo "FAIL: $scheme keygen printed the private key"; exit 1; }
  field "$kp" public_key > "$TMP/pk"
  en=$("$LAYERSEC" kem encaps --scheme "$scheme" --pk "@$TMP/pk")
  [ -z "$(field "$en" shared_secret)" ] || { echo "FAIL: $scheme encaps printed the shared secret"; exit 1; }
  field "$en" ciphertext > "$TMP/ct"
  de=$("$LAYERSEC" kem decaps --scheme "$scheme" --sk "@$TMP/sk" --ct "@$TMP/ct")
  [ -n "$(field "$de" shared_secret_id)" ] || { echo "FAIL: $scheme no shared_secret_id"; exit 1; }
  expect_eq "$scheme round trip" "$(field "$de" shared_secret_id)" "$(field "$en" shared_secret_id)"
done
echo "ok: keygen/encaps/decaps round trips for the other schemes"

# Typed errors: a ciphertext of the wrong length, an unknown scheme, bad hex.
if err=$("$LAYERSEC" kem decaps --scheme ml-kem-768 --sk "@$TMP/decapsulation_0_dk" --ct 00112233 2>&1); then
  echo "FAIL: short ciphertext accepted"; exit 1
fi
echo "$err" | grep -q "wrong length" || { echo "FAIL: unexpected error text: $err"; exit 1; }
if "$LAYERSEC" kem keygen --scheme ml-kem-999 >/dev/null 2>&1; then echo "FAIL: unknown scheme accepted"; exit 1; fi
if "$LAYERSEC" kem encaps --scheme x25519 --pk zz >/dev/null 2>&1; then echo "FAIL: bad hex accepted"; exit 1; fi
echo "ok: typed errors for bad input"

# Issue 14: secret inputs go through base/keyfile.h, secrets print only on request.
expect_fail() { # expect_fail WHAT PATTERN -- CMD...
  local what=$1 pat=$2; shift 3
  local err rc=0
  err=$("$@" 2>&1) || rc=$?
  [ "$rc" -ne 0 ] || { echo "FAIL: $what accepted"; exit 1; }
  [ "$rc" -lt 124 ] || { echo "FAIL: $what: exit $rc (hang or crash)"; exit 1; }
  echo "$err" | grep -q -- "$pat" || { echo "FAIL: $what: message '$err' lacks '$pat'"; exit 1; }
}
cp "$TMP/decapsulation_0_dk" "$TMP/loose_dk"; chmod 644 "$TMP/loose_dk"
expect_fail "0644 --sk file" "--sk: $TMP/loose_dk: key file is accessible by group or others.*mode 0644" -- \
  "$LAYERSEC" kem decaps --scheme ml-kem-768 --sk "@$TMP/loose_dk" --ct "@$TMP/decapsulation_0_c"
ln -s "$TMP/decapsulation_0_dk" "$TMP/link_dk"
expect_fail "symlinked --sk file" "--sk: $TMP/link_dk: key file is a symbolic link" -- \
  "$LAYERSEC" kem decaps --scheme ml-kem-768 --sk "@$TMP/link_dk" --ct "@$TMP/decapsulation_0_c"
mkfifo "$TMP/fifo"
expect_fail "--pk @FIFO" "--pk: $TMP/fifo: not a regular file (FIFO)" -- \
  timeout 10 "$LAYERSEC" kem encaps --scheme ml-kem-768 --pk "@$TMP/fifo"
expect_fail "--ct @/dev/zero" "--ct: /dev/zero: not a regular file (device)" -- \
  timeout 10 "$LAYERSEC" kem decaps --scheme ml-kem-768 --sk "@$TMP/decapsulation_0_dk" --ct @/dev/zero
out=$("$LAYERSEC" kem decaps --scheme ml-kem-768 --sk "@$TMP/decapsulation_0_dk" --ct "@$TMP/decapsulation_0_c")
k0=$(cat "$TMP/decapsulation_0_k")
if echo "$out" | grep -q "$k0"; then echo "FAIL: shared secret printed without --print-secrets"; exit 1; fi
warn=$("$LAYERSEC" kem decaps --scheme ml-kem-768 --sk "@$TMP/decapsulation_0_dk" --ct "@$TMP/decapsulation_0_c" --print-secrets 2>&1 >/dev/null)
echo "$warn" | grep -q "printed in clear" || { echo "FAIL: --print-secrets does not say so on stderr: $warn"; exit 1; }
# "bad public key" names the check: length, then the FIPS 203 modulus check
# (first coefficient 0xfff = 4095 >= q).
ek=$(cat "$TMP/encapsulation_0_ek")
expect_fail "short --pk" "--pk has 4 bytes; ml-kem-768 public keys have 1184 (length check)" -- \
  "$LAYERSEC" kem encaps --scheme ml-kem-768 --pk 00112233
expect_fail "unreduced --pk" "^layersec: kem: --pk fails the FIPS 203 §7.2 encapsulation key modulus check" -- \
  "$LAYERSEC" kem encaps --scheme ml-kem-768 --pk "ff${ek:2:1}f${ek:4}"
# The hybrid names the part; X25519 names the low-order check (u = 0, u = 1);
# an RSA DER key has no fixed length, so a short one is not a length failure.
x0=0000000000000000000000000000000000000000000000000000000000000000
expect_fail "hybrid unreduced --pk" "modulus check in its ML-KEM-768 part" -- \
  "$LAYERSEC" kem encaps --scheme x25519+ml-kem-768 --pk "3948cfe0ad1ddb695d780e59077195da6c56506b027329794ab02bca80815c4dff${ek:2:1}f${ek:4}"
expect_fail "hybrid low-order --pk" "^layersec: kem: --pk has an X25519 part that is a low-order point" -- \
  "$LAYERSEC" kem encaps --scheme x25519+ml-kem-768 --pk "$x0$ek"
expect_fail "low-order x25519 --pk" "^layersec: kem: --pk is a low-order point.*RFC 7748 §6.1 check" -- \
  "$LAYERSEC" kem encaps --scheme x25519 --pk "01${x0:2}"
expect_fail "short rsa --pk" "^layersec: kem: --pk is not a valid rsa-2048 public key" -- \
  "$LAYERSEC" kem encaps --scheme rsa-2048 --pk 3000
# Secrets: ids without the flag, the secret itself with it.
x_sk=4612c550263fc8ad58375df3f557aac531d26850903e55a9f23f21d8534e8ac8
kg=$("$LAYERSEC" kem keygen --scheme x25519 --seed "$x_sk")
[ -n "$(field "$kg" private_key_id)" ] || { echo "FAIL: keygen without --print-secrets: no private_key_id"; exit 1; }
if echo "$kg" | grep -q "$x_sk"; then echo "FAIL: private key printed without --print-secrets"; exit 1; fi
kg=$("$LAYERSEC" kem keygen --scheme x25519 --seed "$x_sk" --print-secrets 2>/dev/null)
expect_eq "keygen --print-secrets private_key" "$(field "$kg" private_key)" "$x_sk"
# A secret --seed @FILE goes through base/keyfile.h too.
printf '%s\n' "$x_sk" > "$TMP/loose_seed"; chmod 644 "$TMP/loose_seed"
expect_fail "0644 --seed file" "^layersec: kem: --seed: $TMP/loose_seed: key file is accessible by group or others" -- \
  "$LAYERSEC" kem keygen --scheme x25519 --seed "@$TMP/loose_seed"
echo "ok: secret inputs through base/keyfile, secrets printed only with --print-secrets, named public key checks"
