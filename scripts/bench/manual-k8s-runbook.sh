#!/usr/bin/env bash
# The cluster-agent baseline: the manual runbook, then the Secret replaced the way an operator does
# it by hand: `kubectl create secret --dry-run=client -o yaml | kubectl replace -f -`.
# Usage: manual-k8s-runbook.sh BASE_URL KUBECONFIG NAMESPACE SECRET   (keys in DD_API_KEY / DD_APP_KEY)
set -euo pipefail
base=$1 kubeconfig=$2 namespace=$3 secret=$4 work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$(dirname "$0")/manual-runbook.sh" "$base" "$work/identity.json"
kubectl --kubeconfig "$kubeconfig" -n "$namespace" create secret generic "$secret" \
  --from-literal=private_key="$(jq -r .private_key "$work/identity.json")" \
  --from-literal=urn="$(jq -r .urn "$work/identity.json")" \
  --dry-run=client -o yaml | kubectl --kubeconfig "$kubeconfig" replace -f - >/dev/null
