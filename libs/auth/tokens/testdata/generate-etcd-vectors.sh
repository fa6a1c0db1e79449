#!/usr/bin/env bash
# Regenerates testdata/etcd-3.4.23/: throwaway test keys (openssl) and, for every sign method
# etcd 3.4.23 supports, one token minted by a real etcd (Debian's /usr/bin/etcd, single member on
# 127.0.0.1) through its JSON gateway. Needs etcd, etcdctl, openssl, curl and jq.
#   bash libs/auth/tokens/testdata/generate-etcd-vectors.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/etcd-3.4.23"
keys="$out/keys"
work="$(mktemp -d)"
trap 'kill "${etcd_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$keys"

# Test keys only: never use them anywhere else.
[ -f "$keys/rsa-2048.pem" ] || openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$keys/rsa-2048.pem"
[ -f "$keys/rsa-2048.pub.pem" ] || openssl pkey -in "$keys/rsa-2048.pem" -pubout -out "$keys/rsa-2048.pub.pem"
# PKCS#1 ("BEGIN RSA PRIVATE KEY") as older etcd deployments often have it.
[ -f "$keys/rsa-2048.pkcs1.pem" ] || openssl rsa -in "$keys/rsa-2048.pem" -traditional -out "$keys/rsa-2048.pkcs1.pem"
for curve in P-256 P-384 P-521; do
  [ -f "$keys/ec-$curve.pem" ] || openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:$curve -out "$keys/ec-$curve.pem"
  [ -f "$keys/ec-$curve.pub.pem" ] || openssl pkey -in "$keys/ec-$curve.pem" -pubout -out "$keys/ec-$curve.pub.pem"
done
[ -f "$keys/ec-P-256.sec1.pem" ] || openssl ec -in "$keys/ec-P-256.pem" -out "$keys/ec-P-256.sec1.pem"
[ -f "$keys/ed25519.pem" ] || openssl genpkey -algorithm ED25519 -out "$keys/ed25519.pem"
[ -f "$keys/ed25519.pub.pem" ] || openssl pkey -in "$keys/ed25519.pem" -pubout -out "$keys/ed25519.pub.pem"
for bytes in 32 48 64; do
  [ -f "$keys/hmac-$bytes.bin" ] || openssl rand -out "$keys/hmac-$bytes.bin" "$bytes"
done
[ -f "$keys/rsa-2048.crt.pem" ] || openssl req -x509 -key "$keys/rsa-2048.pem" -subj "/CN=ward-test" -days 36500 -out "$keys/rsa-2048.crt.pem"

mint() { # method priv-key-file pub-key-file
  local method="$1" priv="$2" pub="$3" port=23790 peer=23800
  rm -rf "$work/data"
  local opts="jwt,priv-key=$keys/$priv,sign-method=$method,ttl=5m"
  [ -n "$pub" ] && opts="$opts,pub-key=$keys/$pub"
  etcd --data-dir "$work/data" --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "default=http://127.0.0.1:$peer" --auth-token "$opts" --log-level error >"$work/etcd.log" 2>&1 &
  etcd_pid=$!
  for _ in $(seq 50); do etcdctl --endpoints "127.0.0.1:$port" endpoint health >/dev/null 2>&1 && break; sleep 0.2; done
  etcdctl --endpoints "127.0.0.1:$port" user add root:rootpw >/dev/null
  etcdctl --endpoints "127.0.0.1:$port" user add alice:alicepw >/dev/null
  etcdctl --endpoints "127.0.0.1:$port" auth enable >/dev/null
  local token
  token="$(curl -s -X POST "http://127.0.0.1:$port/v3/auth/authenticate" -d '{"name":"alice","password":"alicepw"}' | jq -r .token)"
  kill "$etcd_pid"; wait "$etcd_pid" 2>/dev/null || true
  jq -n --arg m "$method" --arg t "$token" --arg k "$priv" --arg p "$pub" \
    '{signMethod: $m, token: $t, privateKeyFile: $k, publicKeyFile: (if $p == "" then null else $p end)}'
}

{
  mint HS256 hmac-32.bin ""
  mint HS384 hmac-48.bin ""
  mint HS512 hmac-64.bin ""
  mint RS256 rsa-2048.pem rsa-2048.pub.pem
  mint RS384 rsa-2048.pkcs1.pem ""
  mint RS512 rsa-2048.pem rsa-2048.crt.pem
  mint PS256 rsa-2048.pem rsa-2048.pub.pem
  mint PS384 rsa-2048.pem ""
  mint PS512 rsa-2048.pem rsa-2048.pub.pem
  mint ES256 ec-P-256.sec1.pem ec-P-256.pub.pem
  mint ES384 ec-P-384.pem ec-P-384.pub.pem
  mint ES512 ec-P-521.pem ec-P-521.pub.pem
} | jq -s '{etcdVersion: "3.4.23", username: "alice", tokens: .}' >"$out/tokens.json"
echo "wrote $out/tokens.json"
