#!/usr/bin/env bash
# Regenerates the control plane's Go module files from test/control-plane/versions.env: run it after
# changing a pin, then commit the go.mod/go.sum files it writes.
#
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and
# replaces them with ./staging in its own go.mod; a module that requires it must replace each of them
# by the same release's published version (v1.X.Y -> v0.X.Y). The list is read from that release's
# own go.mod, so it never drifts. kwok and etcd have modules of their own: the Kubernetes replaces
# would force them onto other library versions.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cp=$root/test/control-plane
# shellcheck source=/dev/null
. "$cp/versions.env"
export PATH=/usr/local/go/bin:$PATH
staging=v0.${KUBERNETES_VERSION#v1.}

k8s_mod=$(cd "$cp/kube" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
{
  echo "module par-identity.test/control-plane/kube"
  echo
  echo "go 1.26.0"
  echo
  echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
  echo
  echo "tool ("
  for t in kube-apiserver kube-controller-manager kube-scheduler kubectl; do echo "	k8s.io/kubernetes/cmd/$t"; done
  echo ")"
  echo
  echo "// Every staging module k8s.io/kubernetes $KUBERNETES_VERSION lists as v0.0.0 (generated from its go.mod"
  echo "// by scripts/control-plane/modules.sh), replaced by the same release's published module."
  echo "replace ("
  grep -oE '^\s*k8s.io/[a-z0-9-]+ => \./staging' "$k8s_mod" | awk '{print $1}' | while read -r m; do
    # The sample-* staging modules are examples the release does not publish; no binary needs them.
    if (cd "$cp/kube" && go list -m "$m@$staging" >/dev/null 2>&1); then echo "	$m => $m $staging"; fi
  done
  echo ")"
} >"$cp/kube/go.mod.new"
mv "$cp/kube/go.mod.new" "$cp/kube/go.mod"
(cd "$cp/kube" && go mod tidy)

printf 'module par-identity.test/control-plane/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n\ntool go.etcd.io/etcd/server/v3\n' "$ETCD_VERSION" >"$cp/etcd/go.mod"
(cd "$cp/etcd" && go mod tidy)
printf 'module par-identity.test/control-plane/kwok\n\ngo 1.26.0\n\nrequire sigs.k8s.io/kwok %s\n\ntool sigs.k8s.io/kwok/cmd/kwok\n' "$KWOK_VERSION" >"$cp/kwok/go.mod"
(cd "$cp/kwok" && go mod tidy)
echo "control plane: module files regenerated for Kubernetes $KUBERNETES_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION" >&2
