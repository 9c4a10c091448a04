#!/usr/bin/env bash
# Installs the pinned CLIs the end-to-end tests drive, each into a GOBIN of
# its own under $NRL_TOOLS_DIR (default ~/.cache/nrl-tools), and prints
# `export` lines for them. Installed versions are reused.
set -euo pipefail
dir=${NRL_TOOLS_DIR:-$HOME/.cache/nrl-tools}
install_tool() { # name version module
  local bin="$dir/$1-$2/$1"
  if [ ! -x "$bin" ]; then
    echo "installing $1 $2 (go install $3@$2)" >&2
    GOBIN="$dir/$1-$2" GOFLAGS=-mod=mod go install "$3@$2" >&2
  fi
  echo "$bin"
}
kustomize=$(install_tool kustomize v5.8.0 sigs.k8s.io/kustomize/kustomize/v5)
helm3=$(install_tool helm v3.21.4 helm.sh/helm/v3/cmd/helm)
helm4=$(install_tool helm v4.3.2 helm.sh/helm/v4/cmd/helm)
golangci=$(install_tool golangci-lint v2.15.0 github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
echo "export NRL_KUSTOMIZE=$kustomize"
echo "export NRL_HELM3=$helm3"
echo "export NRL_HELM4=$helm4"
echo "export NRL_GOLANGCI_LINT=$golangci"
