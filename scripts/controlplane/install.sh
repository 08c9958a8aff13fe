#!/usr/bin/env bash
# Obtain the binaries of the ktop local control plane (issue 3), from registries only:
#   * kube-apiserver, kube-scheduler, kube-controller-manager  (Go module proxy, wrapper module)
#   * etcd                                                     (Go module proxy, wrapper module)
#   * kwok                                                     (go install from the Go module proxy)
#   * prometheus                                               (Debian package)
# Binaries are cached by version under ${KTOP_CACHE_DIR:-$HOME/.cache/ktop}/bin/<component>-<version>/
# and an env file with their paths is written to ${KTOP_CACHE_DIR:-$HOME/.cache/ktop}/controlplane.env.
# Idempotent: a second run only checks the cache and takes seconds.
#
# Overrides: KTOP_K8S_VERSION (default v1.35.4, falling back to v1.34.4 when the proxy lacks it),
#            KTOP_ETCD_VERSION (default v3.6.16), KTOP_KWOK_VERSION (default v0.8.0, fallback v0.7.0),
#            GO (path of the go tool; default: go on PATH, else /usr/local/go/bin/go).
set -Eeuo pipefail

log() { printf '[install.sh %(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { printf '[install.sh] ERROR: %s\n' "$*" >&2; exit 1; }
on_err() {
  local rc=$?
  printf '[install.sh] FAILED (exit %s) at line %s: %s\n' "$rc" "${BASH_LINENO[0]}" "$BASH_COMMAND" >&2
}
trap on_err ERR

CACHE_DIR=${KTOP_CACHE_DIR:-$HOME/.cache/ktop}
BIN_ROOT=$CACHE_DIR/bin
BUILD_ROOT=$CACHE_DIR/build
ENV_FILE=$CACHE_DIR/controlplane.env
mkdir -p "$BIN_ROOT" "$BUILD_ROOT"

GO=${GO:-$(command -v go || true)}
[[ -n "$GO" ]] || GO=/usr/local/go/bin/go
[[ -x "$GO" ]] || die "no Go toolchain found (set GO=/path/to/go; Go >= 1.25 is needed)"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=0 GOFLAGS=${GOFLAGS:--buildvcs=false}
log "using $("$GO" version) at $GO; cache $CACHE_DIR"

# ---------------------------------------------------------------------------------------------
# helpers
have_bins() { # dir bin...  -> true when every binary exists and is executable
  local dir=$1; shift
  local b
  for b in "$@"; do
    [[ -x "$dir/$b" ]] || return 1
  done
  return 0
}

first_line() { # cmd args... -> first line of its output (no pipe: avoids SIGPIPE + pipefail)
  local out
  out=$("$@" 2>&1) || die "$* failed: $out"
  printf '%s\n' "${out%%$'\n'*}"
}

proxy_has() { # module version -> true when the Go module proxy serves that version
  local versions
  versions=" $("$GO" list -m -versions "$1" 2>/dev/null || true) "
  [[ "$versions" == *" $2 "* ]]
}

# build_wrapped NAME MODULE VERSION OUTDIR STAGING_VERSION LDFLAGS PKG...
#   Creates a wrapper module that requires MODULE@VERSION and, for every *local* replace directive
#   in MODULE's own go.mod (e.g. k8s.io/api => ./staging/src/k8s.io/api), replaces the module with
#   its published version: the version MODULE's go.mod requires, or STAGING_VERSION when that is
#   the placeholder v0.0.0. Then builds PKG... into OUTDIR.
build_wrapped() {
  local name=$1 module=$2 version=$3 outdir=$4 staging_version=$5 ldflags=$6; shift 6
  local work=$BUILD_ROOT/$name-$version
  rm -rf "$work"; mkdir -p "$work"
  log "$name: resolving $module@$version from the Go module proxy"
  local gomod
  gomod=$(cd "$work" && "$GO" mod download -json "$module@$version" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
  [[ -s "$gomod" ]] || die "$name: could not download go.mod of $module@$version"
  (
    cd "$work"
    "$GO" mod init ktop.local/build/"$name" >/dev/null 2>&1
    "$GO" mod edit -require="$module@$version"
    # Derive the replacements from the dependency's own go.mod.
    "$GO" mod edit -json "$gomod" | STAGING="$staging_version" python3 -c '
import json, os, sys
mod = json.load(sys.stdin)
required = {r["Path"]: r["Version"] for r in mod.get("Require") or []}
for rep in mod.get("Replace") or []:
    old, new = rep["Old"]["Path"], rep["New"]
    if old not in required:                         # not a dependency: irrelevant
        continue
    if new["Path"].startswith((".", "/")):          # local directory -> published module
        ver = required[old]
        if ver == "v0.0.0":
            ver = os.environ["STAGING"]
        print(f"{old}={old}@{ver}")
    elif new.get("Version"):                        # module -> module: keep as is
        print(f"{old}={new['"'"'Path'"'"']}@{new['"'"'Version'"'"']}")
' > replaces.txt
    local n; n=$(wc -l < replaces.txt)
    log "$name: $n replace directives derived from $module's go.mod"
    local r
    while IFS= read -r r; do "$GO" mod edit -replace="$r"; done < replaces.txt
    {
      echo '//go:build tools'
      echo
      echo 'package tools'
      echo
      echo 'import ('
      local p; for p in "$@"; do echo "	_ \"$p\""; done
      echo ')'
    } > tools.go
    log "$name: go mod tidy (downloads modules on a cold cache)"
    "$GO" mod tidy
    log "$name: go build $* (this is the slow part on a cold build cache)"
    mkdir -p "$outdir.tmp"
    "$GO" build -trimpath -ldflags "-s -w $ldflags" -o "$outdir.tmp/" "$@"
  )
  rm -rf "$outdir"; mv "$outdir.tmp" "$outdir"
}

# ---------------------------------------------------------------------------------------------
# 1. Prometheus (Debian package; the service is not started)
t0=$SECONDS
if command -v prometheus >/dev/null 2>&1; then
  PROMETHEUS=$(command -v prometheus)
  log "prometheus: present at $PROMETHEUS"
else
  log "prometheus: installing the Debian package"
  SUDO=; [[ $(id -u) -eq 0 ]] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || die "apt-get update failed"
  $SUDO apt-get install -y --no-install-recommends prometheus \
    || die "apt-get install prometheus failed"
  PROMETHEUS=$(command -v prometheus) || die "prometheus not on PATH after apt-get install"
fi
# Debian's postinst may start the service where init is available; we never want it running.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
  log "prometheus: stopping the Debian service (the lab runs its own instance)"
  systemctl stop prometheus || true
fi
PROM_VERSION=$(first_line "$PROMETHEUS" --version)
log "prometheus: $PROM_VERSION ($((SECONDS - t0))s)"

# ---------------------------------------------------------------------------------------------
# 2. etcd (wrapper module around go.etcd.io/etcd/server/v3, which has local replace directives)
t0=$SECONDS
ETCD_VERSION=${KTOP_ETCD_VERSION:-v3.6.16}
ETCD_DIR=$BIN_ROOT/etcd-$ETCD_VERSION
if have_bins "$ETCD_DIR" etcd; then
  log "etcd: cached at $ETCD_DIR"
else
  build_wrapped etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" "$ETCD_DIR" "$ETCD_VERSION" "" \
    go.etcd.io/etcd/server/v3
  # go build names the binary after the last non-version path element ("server").
  if [[ -x "$ETCD_DIR/server" ]]; then mv "$ETCD_DIR/server" "$ETCD_DIR/etcd"; fi
fi
[[ -x "$ETCD_DIR/etcd" ]] || die "etcd binary missing in $ETCD_DIR"
log "etcd: $(first_line "$ETCD_DIR/etcd" --version)"
log "etcd: ok ($((SECONDS - t0))s)"

# ---------------------------------------------------------------------------------------------
# 3. kwok (no replace directives -> plain go install)
t0=$SECONDS
KWOK_VERSION=${KTOP_KWOK_VERSION:-}
if [[ -z "$KWOK_VERSION" ]]; then
  for v in v0.8.0 v0.7.0; do
    if have_bins "$BIN_ROOT/kwok-$v" kwok; then KWOK_VERSION=$v; break; fi
  done
fi
if [[ -n "$KWOK_VERSION" ]] && have_bins "$BIN_ROOT/kwok-$KWOK_VERSION" kwok; then
  log "kwok: cached at $BIN_ROOT/kwok-$KWOK_VERSION"
else
  ok=
  for v in ${KWOK_VERSION:-v0.8.0 v0.7.0}; do
    log "kwok: go install sigs.k8s.io/kwok/cmd/kwok@$v"
    rm -rf "$BIN_ROOT/kwok-$v.tmp"; mkdir -p "$BIN_ROOT/kwok-$v.tmp"
    if GOBIN="$BIN_ROOT/kwok-$v.tmp" "$GO" install -trimpath -ldflags "-s -w" \
        "sigs.k8s.io/kwok/cmd/kwok@$v"; then
      rm -rf "$BIN_ROOT/kwok-$v"; mv "$BIN_ROOT/kwok-$v.tmp" "$BIN_ROOT/kwok-$v"
      KWOK_VERSION=$v; ok=1; break
    fi
    log "kwok: $v failed, trying the next version"
  done
  [[ -n "$ok" ]] || die "could not go install kwok"
fi
KWOK=$BIN_ROOT/kwok-$KWOK_VERSION/kwok
log "kwok: $(first_line "$KWOK" --version)"
log "kwok: ok ($((SECONDS - t0))s)"

# ---------------------------------------------------------------------------------------------
# 4. Kubernetes control plane (wrapper module around k8s.io/kubernetes)
t0=$SECONDS
K8S_BINS=(kube-apiserver kube-controller-manager kube-scheduler)
K8S_VERSION=${KTOP_K8S_VERSION:-}
if [[ -z "$K8S_VERSION" ]]; then
  for v in v1.35.4 v1.34.4; do
    if have_bins "$BIN_ROOT/kubernetes-$v" "${K8S_BINS[@]}"; then K8S_VERSION=$v; break; fi
  done
fi
if [[ -z "$K8S_VERSION" ]]; then
  if proxy_has k8s.io/kubernetes v1.35.4; then K8S_VERSION=v1.35.4; else K8S_VERSION=v1.34.4; fi
fi
K8S_DIR=$BIN_ROOT/kubernetes-$K8S_VERSION
minor_patch=${K8S_VERSION#v1.}                 # 35.4
minor=${minor_patch%%.*}                       # 35
ldf="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
ldf+=" -X k8s.io/component-base/version.gitMajor=1"
ldf+=" -X k8s.io/component-base/version.gitMinor=$minor"
ldf+=" -X k8s.io/component-base/version.gitTreeState=clean"
if have_bins "$K8S_DIR" "${K8S_BINS[@]}"; then
  log "kubernetes: cached at $K8S_DIR"
else
  build_wrapped kubernetes k8s.io/kubernetes "$K8S_VERSION" "$K8S_DIR" "v0.$minor_patch" "$ldf" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler
fi
for b in "${K8S_BINS[@]}"; do
  [[ -x "$K8S_DIR/$b" ]] || die "$b missing in $K8S_DIR"
  log "$b: $(first_line "$K8S_DIR/$b" --version)"
done
log "kubernetes: ok ($((SECONDS - t0))s)"

# kubectl of the same version, for the tests that assemble a bundle by hand as a user would
# (kept in its own directory so that adding it never invalidates the components above).
KUBECTL_DIR=$BIN_ROOT/kubectl-$K8S_VERSION
if have_bins "$KUBECTL_DIR" kubectl; then
  log "kubectl: cached at $KUBECTL_DIR"
else
  build_wrapped kubectl k8s.io/kubernetes "$K8S_VERSION" "$KUBECTL_DIR" "v0.$minor_patch" "$ldf" \
    k8s.io/kubernetes/cmd/kubectl
fi
[[ -x "$KUBECTL_DIR/kubectl" ]] || die "kubectl missing in $KUBECTL_DIR"
log "kubectl: $("$KUBECTL_DIR/kubectl" version --client 2>/dev/null | awk 'NR == 1')"

# ---------------------------------------------------------------------------------------------
cat > "$ENV_FILE.tmp" <<ENV
# Written by scripts/controlplane/install.sh; read by ktop.lab.
KTOP_K8S_VERSION=$K8S_VERSION
KTOP_KUBE_APISERVER=$K8S_DIR/kube-apiserver
KTOP_KUBE_CONTROLLER_MANAGER=$K8S_DIR/kube-controller-manager
KTOP_KUBE_SCHEDULER=$K8S_DIR/kube-scheduler
KTOP_KUBECTL=$KUBECTL_DIR/kubectl
KTOP_ETCD_VERSION=$ETCD_VERSION
KTOP_ETCD=$ETCD_DIR/etcd
KTOP_KWOK_VERSION=$KWOK_VERSION
KTOP_KWOK=$KWOK
KTOP_PROMETHEUS=$PROMETHEUS
ENV
mv "$ENV_FILE.tmp" "$ENV_FILE"
log "binaries:"
sed -n 's/^KTOP_\([A-Z_]*\)=\(.*\)$/  \1 \2/p' "$ENV_FILE"
log "env file: $ENV_FILE"
log "done"
