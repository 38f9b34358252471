#!/usr/bin/env bash
# The baseline: what an operator scripts by hand without par-identity (openssl + curl + jq + mv).
# Usage: manual-runbook.sh BASE_URL IDENTITY_FILE   (keys in DD_API_KEY / DD_APP_KEY)
set -euo pipefail
base=$1 out=$2 work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
b64url() { basenc --base64url -w0 | tr -d '='; }
openssl ecparam -name prime256v1 -genkey -noout -out "$work/key.pem" 2>/dev/null
openssl ec -in "$work/key.pem" -pubout -out "$work/pub.pem" 2>/dev/null
hex=$(openssl ec -in "$work/key.pem" -text -noout 2>/dev/null | tr -d ' :\n')
# Hex digits are cut with parameter expansion, not head/tail -c on a here-string: that one ends in a
# newline, so `tail -c 64` kept 63 digits and y/d came out 31 bytes (an identity the agent rejects).
priv=$(sed -E 's/.*priv(.*)pub.*/\1/' <<<"$hex")
priv=$(printf '%064s' "${priv: -64}" | tr ' ' 0)   # the last 32 bytes, left-padded: d is exactly 32 bytes
pub=$(sed -E 's/.*pub04(.{128}).*/\1/' <<<"$hex")
d=$(printf '%s' "$priv" | xxd -r -p | b64url)
x=$(printf '%s' "${pub:0:64}" | xxd -r -p | b64url)
y=$(printf '%s' "${pub:64:64}" | xxd -r -p | b64url)
kid=$(printf '{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}' "$x" "$y" | openssl dgst -sha256 -binary | b64url)
body=$(jq -cn --arg pem "$(cat "$work/pub.pem")"$'\n' --arg name "$(hostname)-$(date -u +%Y%m%d%H%M%S)" --arg host "$(hostname)" \
  '{data:{type:"createRunnerRequest",attributes:{runner_name:$name,runner_modes:["pull"],runner_host:"",public_key_pem:$pem,agent_hostname:$host,agent_flavor:"private_action_runner"}}}')
resp=$(curl -sSf -X POST "$base/api/unstable/on_prem_runners" -H 'Content-Type: application/vnd.api+json' -H 'Accept: application/json' \
  -H "DD-API-KEY: $DD_API_KEY" -H "DD-APPLICATION-KEY: $DD_APP_KEY" -H 'X-Datadog-OnPrem-Version: 7.81.0' --data "$body")
org=$(jq -r '.data.attributes.org_id' <<<"$resp")
runner=$(jq -r '.data.attributes.runner_id' <<<"$resp")
jwk=$(printf '{"use":"sig","kty":"EC","kid":"%s","crv":"P-256","alg":"ES256","x":"%s","y":"%s","d":"%s"}' "$kid" "$x" "$y" "$d" | b64url)
hash=$(printf '%s' "$DD_API_KEY" | sha256sum | cut -d' ' -f1)
printf '{"private_key":"%s","urn":"urn:dd:apps:on-prem-runner:us1:%s:%s","hostname":"%s","api_key_hash":"%s"}' "$jwk" "$org" "$runner" "$(hostname)" "$hash" > "$out.tmp"
chmod 600 "$out.tmp"
mv "$out.tmp" "$out"
