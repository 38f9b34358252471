#!/usr/bin/env bash
# npm run test:cluster: the two-cluster suite (test/cluster/) against the real control plane.
# Starts it (building it first when the pinned versions changed), runs the suite with the built
# kubectl first on PATH, and stops everything it started, also when the tests fail or are interrupted.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cp=scripts/control-plane.sh
# A control plane this script did not start (an operator's, left running) is used and left alone.
started=0
if ! "$cp" kubeconfig >/dev/null 2>&1 || ! curl -sf --cacert .tmp/control-plane/pki/ca.crt "https://127.0.0.1:$(cat .tmp/control-plane/apiserver.port 2>/dev/null || echo 1)/readyz" >/dev/null 2>&1; then
  "$cp" start
  started=1
fi
cleanup() { if [ "$started" = 1 ]; then "$cp" stop; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
eval "$("$cp" env)"
kubectl version 2>/dev/null | sed 's/^/control plane: /' >&2 || true
scripts/node.sh node_modules/vitest/vitest.mjs run --config vitest.cluster.config.ts "$@"
