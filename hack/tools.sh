#!/usr/bin/env bash
# Installs the pinned CLIs the end-to-end tests drive, each into a GOBIN of
# its own under $NRL_TOOLS_DIR (default ~/.cache/nrl-tools), and prints
# `export` lines for them. Installed versions are reused; missing ones are
# installed side by side (each `go install` spends much of its time on
# downloads, which overlap another's compile), and a binary is only moved
# into place once built, so an interrupted install is never taken as done.
set -euo pipefail
dir=${NRL_TOOLS_DIR:-$HOME/.cache/nrl-tools}
# name version package [from]: go install package@version, built from the
# tool's own go.mod, as released; "from this-module": the version this
# repository's go.mod pins (its `tool` line), built from its module graph.
# Helm v3 is a library of this module already, at the same version, so
# built that way the CLI shares its compiled packages (k8s.io/api,
# client-go, helm's own) with the tests: minutes of a cold CI run.
tools=(
  "kustomize v5.8.0 sigs.k8s.io/kustomize/kustomize/v5"
  "helm v3.21.4 helm.sh/helm/v3/cmd/helm this-module"
  "helm v4.3.2 helm.sh/helm/v4/cmd/helm"
  "golangci-lint v2.15.0 github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
)
root=$(cd "$(dirname "$0")/.." && pwd)
install_tool() { # name version package [this-module]
  local gobin="$dir/$1-$2" tmp ok=0
  mkdir -p "$gobin"
  tmp=$(mktemp -d "$gobin/.install.XXXXXX")
  if [ "${4:-}" = this-module ]; then
    local pinned
    pinned=$(cd "$root" && go list -m -f '{{.Version}}' "$(dirname "$(dirname "$3")")")
    if [ "$pinned" != "$2" ]; then
      echo "tools.sh: go.mod pins $3 at $pinned; expected $2 (update both)" >&2
    elif (cd "$root" && GOBIN="$tmp" go install "$3"); then
      ok=1
    fi
  elif GOBIN="$tmp" GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" go install "$3@$2"; then
    ok=1
  fi
  if [ "$ok" = 1 ]; then
    mv "$tmp/$1" "$gobin/$1"
    rm -rf "$tmp"
  else
    rm -rf "$tmp"
    return 1
  fi
}
pids=()
names=()
for t in "${tools[@]}"; do
  read -r name version module from <<<"$t"
  if [ ! -x "$dir/$name-$version/$name" ]; then
    echo "installing $name $version (go install $module@$version${from:+, as this module pins it})" >&2
    install_tool "$name" "$version" "$module" "$from" >&2 &
    pids+=($!)
    names+=("$name $version")
  fi
done
failed=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "tools.sh: installing ${names[$i]} failed" >&2
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
echo "export NRL_KUSTOMIZE=$dir/kustomize-v5.8.0/kustomize"
echo "export NRL_HELM3=$dir/helm-v3.21.4/helm"
echo "export NRL_HELM4=$dir/helm-v4.3.2/helm"
echo "export NRL_GOLANGCI_LINT=$dir/golangci-lint-v2.15.0/golangci-lint"
