#!/usr/bin/env bash
# A real Kubernetes control plane on loopback for the real-cluster tests and bench (docs/control-plane.md):
# etcd, kube-apiserver, kube-controller-manager and kube-scheduler as separate processes, and kwok for
# Nodes without kubelets. Built from Go modules by scripts/control-plane/build.sh.
#
#   scripts/control-plane.sh start        build when the pinned versions changed, start, wait until ready
#   scripts/control-plane.sh stop         stop every process start started, by pid
#   scripts/control-plane.sh kubeconfig   print the admin kubeconfig's path
#   scripts/control-plane.sh env          print the shell lines the tests read (PATH, KUBECONFIG, ...)
#   scripts/control-plane.sh restart-apiserver   stop and start the apiserver alone (etcd keeps the state)
#   scripts/control-plane.sh add-nodes PREFIX COUNT [CPU] [MEMORY] [PODS]
#                                         COUNT kwok Nodes PREFIX-0.. with that status.allocatable
#                                         (default 4, 8Gi, 110), labelled par-test-pool=PREFIX; waits Ready
#   scripts/control-plane.sh build        build (or reuse) the binaries only
#
# PAR_CONTROL_PLANE_DIR (default .tmp/control-plane) holds certificates, data, logs and pids.
# PAR_CONTROL_PLANE_POD_READY_MS (default 2000): how long a bound Pod takes to become Ready.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PAR_CONTROL_PLANE_BIN:-$root/test/control-plane/bin}
dir=${PAR_CONTROL_PLANE_DIR:-$root/.tmp/control-plane}
pod_ready_ms=${PAR_CONTROL_PLANE_POD_READY_MS:-2000}
pki=$dir/pki

log() { printf 'control plane: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# A free loopback port, asked of the kernel (bind to port 0).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

alive() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

# Starts one component in the background with its output in $dir/<name>.log and its pid in <name>.pid.
# setsid: its own session, so a Ctrl-C in the caller's terminal does not reach it.
launch() {
  local name=$1; shift
  setsid "$@" >"$dir/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/$name.pid"
}

# Polls a condition until it holds or the deadline passes (seconds), showing the component's log tail on failure.
wait_for() {
  local what=$1 deadline=$2 component=$3; shift 3
  local end=$(( $(date +%s) + deadline ))
  until "$@" >/dev/null 2>&1; do
    if ! alive "$component"; then tail -n 30 "$dir/$component.log" >&2; die "$component exited while waiting for $what"; fi
    if [ "$(date +%s)" -ge "$end" ]; then tail -n 30 "$dir/$component.log" >&2; die "timed out after ${deadline}s waiting for $what"; fi
    sleep 0.2
  done
}

# CA, serving and client certificates, and the service-account signing key (openssl).
make_pki() {
  [ -f "$pki/.done" ] && return 0
  mkdir -p "$pki"; chmod 700 "$pki"
  local o="openssl"
  $o genrsa -out "$pki/ca.key" 2048 2>/dev/null
  $o req -x509 -new -key "$pki/ca.key" -days 3650 -subj "/CN=par-identity-test-ca" -out "$pki/ca.crt" 2>/dev/null
  # name  subject  extension
  local specs=(
    "apiserver|/CN=kube-apiserver|subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth"
    "admin|/O=system:masters/CN=kubernetes-admin|extendedKeyUsage=clientAuth"
    "controller-manager|/CN=system:kube-controller-manager|extendedKeyUsage=clientAuth"
    "scheduler|/CN=system:kube-scheduler|extendedKeyUsage=clientAuth"
    "kwok|/O=system:masters/CN=kwok-controller|extendedKeyUsage=clientAuth"
  )
  local spec name subj ext
  for spec in "${specs[@]}"; do
    IFS='|' read -r name subj ext <<<"$spec"
    $o genrsa -out "$pki/$name.key" 2048 2>/dev/null
    $o req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
    printf "%b\n" "$ext" >"$pki/$name.ext"
    $o x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 3650 \
      -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  done
  $o genrsa -out "$pki/sa.key" 2048 2>/dev/null
  $o rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  touch "$pki/.done"
}

# kubeconfig for one client certificate, certificates embedded so the file stands alone.
write_kubeconfig() {
  local name=$1 port=$2 out=$3
  local b64='base64 -w0'
  umask 077
  cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: par-identity-test
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $($b64 <"$pki/ca.crt")
users:
- name: $name
  user:
    client-certificate-data: $($b64 <"$pki/$name.crt")
    client-key-data: $($b64 <"$pki/$name.key")
contexts:
- name: $name
  context:
    cluster: par-identity-test
    user: $name
current-context: $name
EOF
}

readyz() { curl -sf --cacert "$pki/ca.crt" "https://127.0.0.1:$(cat "$dir/apiserver.port")/readyz"; }
healthz() { curl -sfk "https://127.0.0.1:$1/healthz"; }

start_apiserver() {
  local port etcd_port
  port=$(cat "$dir/apiserver.port"); etcd_port=$(cat "$dir/etcd.port")
  launch apiserver "$bin/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$port" \
    --cert-dir="$dir/apiserver-certs" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --api-audiences=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range=10.0.0.0/24 \
    --endpoint-reconciler-type=none \
    --profiling=false
  wait_for "the apiserver's /readyz" 60 apiserver readyz
}

stop_one() {
  local name=$1 pid
  [ -f "$dir/$name.pid" ] || return 0
  pid=$(cat "$dir/$name.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/$name.pid"
}

cmd_start() {
  if alive etcd && alive apiserver && alive controller-manager && alive scheduler && alive kwok; then
    log "already running ($dir)"; return 0
  fi
  "$root/scripts/control-plane/build.sh"
  local started; started=$(date +%s%N)
  cmd_stop 2>/dev/null || true
  rm -rf "$dir/etcd-data"
  mkdir -p "$dir"; chmod 700 "$dir"
  make_pki
  local etcd_port etcd_peer api_port cm_port sched_port kwok_port
  etcd_port=$(free_port); etcd_peer=$(free_port); api_port=$(free_port)
  cm_port=$(free_port); sched_port=$(free_port); kwok_port=$(free_port)
  echo "$etcd_port" >"$dir/etcd.port"; echo "$api_port" >"$dir/apiserver.port"

  launch etcd "$bin/etcd" --name=par-identity-test --data-dir="$dir/etcd-data" \
    --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer" \
    --initial-cluster="par-identity-test=http://127.0.0.1:$etcd_peer" \
    --unsafe-no-fsync --quota-backend-bytes=2147483648 --log-level=warn
  wait_for "etcd" 30 etcd curl -sf "http://127.0.0.1:$etcd_port/health"

  start_apiserver
  write_kubeconfig admin "$api_port" "$dir/admin.kubeconfig"
  write_kubeconfig controller-manager "$api_port" "$dir/controller-manager.kubeconfig"
  write_kubeconfig scheduler "$api_port" "$dir/scheduler.kubeconfig"
  write_kubeconfig kwok "$api_port" "$dir/kwok.kubeconfig"

  launch controller-manager "$bin/kube-controller-manager" \
    --kubeconfig="$dir/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$dir/controller-manager.kubeconfig" --authorization-kubeconfig="$dir/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$cm_port" --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key"
  launch scheduler "$bin/kube-scheduler" \
    --kubeconfig="$dir/scheduler.kubeconfig" \
    --authentication-kubeconfig="$dir/scheduler.kubeconfig" --authorization-kubeconfig="$dir/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$sched_port" --leader-elect=false

  sed "s/2000 # POD_READY_MS/$pod_ready_ms/" "$root/test/control-plane/kwok-stages.yaml" >"$dir/kwok.yaml"
  launch kwok "$bin/kwok" --config="$dir/kwok.yaml" --kubeconfig="$dir/kwok.kubeconfig" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-lease-duration-seconds=40 --cidr=10.244.0.0/16 --node-ip=10.240.0.1 \
    --server-address="127.0.0.1:$kwok_port"

  wait_for "the controller-manager" 60 controller-manager healthz "$cm_port"
  wait_for "the scheduler" 60 scheduler healthz "$sched_port"
  # The controllers are up when the service-account controller has made `default`'s ServiceAccount
  # (Pods cannot be admitted before) and the root CA ConfigMap is published.
  local k="$bin/kubectl --kubeconfig=$dir/admin.kubeconfig"
  wait_for "the default ServiceAccount" 60 controller-manager $k get serviceaccount default -n default
  wait_for "kube-root-ca.crt" 60 controller-manager $k get configmap kube-root-ca.crt -n default
  wait_for "kwok" 30 kwok healthz_kwok "$kwok_port"
  log "ready in $(( ($(date +%s%N) - started) / 1000000 )) ms: KUBECONFIG=$dir/admin.kubeconfig"
}

# kwok answers /healthz on its server address once its controllers run.
healthz_kwok() { curl -sf "http://127.0.0.1:$1/healthz"; }

# Nodes for kwok: the annotation is what kwok manages (--manage-nodes-with-annotation-selector); the
# allocatable given here is what the scheduler fits Pods into (kwok keeps it when it makes the Node Ready).
cmd_add_nodes() {
  local prefix=${1:?prefix} count=${2:?count} cpu=${3:-4} memory=${4:-8Gi} pods=${5:-110} i
  [ -f "$dir/admin.kubeconfig" ] || die "not started (no $dir/admin.kubeconfig)"
  local k="$bin/kubectl --kubeconfig=$dir/admin.kubeconfig"
  for ((i = 0; i < count; i++)); do
    printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s-%d","annotations":{"kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0"},"labels":{"kubernetes.io/hostname":"%s-%d","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","type":"kwok","par-test-pool":"%s"}},"status":{"allocatable":{"cpu":"%s","memory":"%s","pods":"%s"},"capacity":{"cpu":"%s","memory":"%s","pods":"%s"}}}\n' \
      "$prefix" "$i" "$prefix" "$i" "$prefix" "$cpu" "$memory" "$pods" "$cpu" "$memory" "$pods"
  done | $k create -f - >/dev/null
  $k wait --for=condition=Ready --timeout=120s node -l "par-test-pool=$prefix" >/dev/null
  log "$count Nodes $prefix-0..$((count - 1)) Ready (cpu $cpu, memory $memory, pods $pods)"
}

cmd_stop() {
  local name
  for name in kwok scheduler controller-manager apiserver etcd; do stop_one "$name"; done
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  kubeconfig) [ -f "$dir/admin.kubeconfig" ] || die "not started (no $dir/admin.kubeconfig)"; echo "$dir/admin.kubeconfig" ;;
  env)
    [ -f "$dir/admin.kubeconfig" ] || die "not started (no $dir/admin.kubeconfig)"
    echo "export PATH=$bin:\$PATH"
    echo "export KUBECONFIG=$dir/admin.kubeconfig"
    echo "export PAR_IDENTITY_TEST_CLUSTER=real"
    ;;
  restart-apiserver) stop_one apiserver; start_apiserver ;;
  build) "$root/scripts/control-plane/build.sh" ;;
  add-nodes) shift; cmd_add_nodes "$@" ;;
  *) echo "usage: $0 start|stop|kubeconfig|env|restart-apiserver|add-nodes|build" >&2; exit 2 ;;
esac
