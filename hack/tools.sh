#!/usr/bin/env bash
# Installs the pinned CLIs the end-to-end tests drive, each into a GOBIN of
# its own under $NRL_TOOLS_DIR (default ~/.cache/nrl-tools), and prints
# `export` lines for them. Installed versions are reused; missing ones are
# installed side by side (each `go install` spends much of its time on
# downloads, which overlap another's compile), and a binary is only moved
# into place once built, so an interrupted install is never taken as done.
set -euo pipefail
dir=${NRL_TOOLS_DIR:-$HOME/.cache/nrl-tools}
tools=(
  "kustomize v5.8.0 sigs.k8s.io/kustomize/kustomize/v5"
  "helm v3.21.4 helm.sh/helm/v3/cmd/helm"
  "helm v4.3.2 helm.sh/helm/v4/cmd/helm"
  "golangci-lint v2.15.0 github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
)
install_tool() { # name version module
  local gobin="$dir/$1-$2" tmp
  mkdir -p "$gobin"
  tmp=$(mktemp -d "$gobin/.install.XXXXXX")
  # Each tool is built from its own go.mod (go install pkg@version), as
  # released; the caller's GOFLAGS (e.g. -trimpath for this module) stay out.
  if GOBIN="$tmp" GOFLAGS=-mod=mod go install "$3@$2"; then
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
  read -r name version module <<<"$t"
  if [ ! -x "$dir/$name-$version/$name" ]; then
    echo "installing $name $version (go install $module@$version)" >&2
    install_tool "$name" "$version" "$module" >&2 &
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
