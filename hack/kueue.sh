#!/usr/bin/env bash
# Builds the pinned Kueue manager (sigs.k8s.io/kueue/cmd/kueue, the binary
# Kueue's own Deployment runs) and renders its install manifests (its
# config/default, with the pinned kustomize), once, into a versioned folder
# under $NRL_TOOLS_DIR (default ~/.cache/nrl-tools), and prints the
# `export` line the Kueue tier (tests/kueue, internal/kueue) reads. A built
# folder is reused.
#
# Built from the nested module hack/kueue: Kueue v0.17.0 requires KubeRay's
# API types at v1.6.0, and its graph must not move this module's pins
# (KubeRay v1.5.0 for our own reconcilers). The k8s.io modules and
# controller-runtime are raised to this repository's pins there (v0.36.2,
# v0.24.1), so Kueue runs with the same client libraries as our tiers, and
# every module both builds compile is at one version (the higher of the
# two, raised on the lower side): the k8s.io, controller-runtime, protobuf
# and x/sys packages the main module's vet and tests compiled are then
# reused, not compiled again under other dependencies (about 230 fewer
# packages; docs/performance.md, "Cold CI").
set -euo pipefail
version=v0.17.0 # sigs.k8s.io/kueue in hack/kueue/go.mod
root=$(cd "$(dirname "$0")/.." && pwd)
tools=${NRL_TOOLS_DIR:-$HOME/.cache/nrl-tools}
# Keyed by hack/kueue/go.sum too: aligning a dependency with the main
# module (so the two builds share compiled packages) rebuilds it.
sum=$(sha256sum "$root/hack/kueue/go.sum" | cut -c1-12)
dir=$tools/kueue-$version-$sum
if [ ! -x "$dir/kueue" ] || [ ! -s "$dir/kueue.yaml" ]; then
  echo "building Kueue $version's manager into $dir (cold: ~3 CPU-minutes after kube-apiserver's build)" >&2
  kustomize=${NRL_KUSTOMIZE:-$tools/kustomize-v5.8.0/kustomize}
  if [ ! -x "$kustomize" ]; then
    echo "kueue.sh: no kustomize at $kustomize; run ./hack/tools.sh first" >&2
    exit 1
  fi
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/.build.XXXXXX")
  trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
  (
    cd "$root/hack/kueue"
    export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly"
    go build -trimpath -ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$version" -o "$tmp/kueue" sigs.k8s.io/kueue/cmd/kueue
    # Kueue's install manifests as its release renders them: config/default
    # of the same module version (CRDs, webhook configurations and their
    # Service, the kueue-system namespace; the harness applies those).
    src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
    cp -r "$src/config" "$tmp/config"
    chmod -R u+w "$tmp/config"
    "$kustomize" build "$tmp/config/default" >"$tmp/kueue.yaml"
  ) >&2
  mv "$tmp/kueue" "$tmp/kueue.yaml" "$dir/"
fi
echo "export NRL_KUEUE_DIR=$dir"
