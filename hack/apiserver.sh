#!/usr/bin/env bash
# Builds the pinned kube-apiserver, etcd and kube-scheduler that the
# real-API-server test tiers (tests/apiserver, tests/scheduling) drive, once, into a versioned folder under
# $NRL_TOOLS_DIR (default ~/.cache/nrl-tools), and prints the `export` line
# envtest reads. Built binaries are reused.
#
# `go install` cannot build kube-apiserver: k8s.io/kubernetes requires its
# staging modules at v0.0.0 and only a main module's replace lines can point
# them at real versions, so the nested module hack/apiserver does that.
# Cold: about 7 CPU-minutes (4 min or more on 2 cores) and 2.2 GB of Go build
# cache; see docs/reliability.md.
set -euo pipefail
version=v1.36.3 # k8s.io/kubernetes in hack/apiserver/go.mod; etcd is what its graph picks
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${NRL_TOOLS_DIR:-$HOME/.cache/nrl-tools}/kube-apiserver-$version
# The server reports its version as a release does (Helm's kubeVersion
# checks and semverCompare read it): stamped at link time, as Kubernetes'
# own build does; a binary without the stamp is rebuilt.
stamp="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=$(echo "$version" | cut -d. -f1 | tr -d v) -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean"
stamped() { [ "$("$dir/kube-apiserver" --version 2>/dev/null)" = "Kubernetes $version" ]; }
if [ ! -x "$dir/kube-apiserver" ] || [ ! -x "$dir/etcd" ] || [ ! -x "$dir/kube-scheduler" ] || ! stamped; then
  echo "building kube-apiserver $version, kube-scheduler and etcd into $dir (cold: ~8 CPU-minutes, 4 min or more on 2 cores)" >&2
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/.build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (
    cd "$root/hack/apiserver"
    # GOFLAGS kept (.ci/run's compile flags); the versions are go.sum's.
    export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly"
    go build -trimpath -ldflags "-s -w $stamp" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
    go build -trimpath -ldflags "-s -w $stamp" -o "$tmp/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler
    go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" ./etcd
  ) >&2
  # Moved in only when all built, so a broken build is never taken as done.
  mv "$tmp/kube-apiserver" "$tmp/kube-scheduler" "$tmp/etcd" "$dir/"
fi
echo "export KUBEBUILDER_ASSETS=$dir"
