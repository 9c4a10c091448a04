# nemo-rl-krm. `make test` is what CI runs (see .ci/run and README).
GO        ?= go
BIN       := bin/nrl-k8s
KRM_BIN   := bin/nrl-krm
VERSION   ?= v0.1.0
IMAGE     ?= ghcr.io/nemo-rl-krm/nrl-k8s:$(VERSION)
EXAMPLES  := testdata/nemo-rl
LDFLAGS   := -s -w -X github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli.Version=$(VERSION)
TOOLS_ENV  = $(shell ./hack/tools.sh)

# One set of compile flags for vet, lint, the binaries, the image and the
# tests: static (the image's binary is) and -trimpath (reproducible). Go's
# build cache is keyed by them, so with one set each package is compiled
# once, not once per flag set; cold CI depends on it (docs/performance.md).
export CGO_ENABLED := 0
ifeq ($(filter -trimpath,$(GOFLAGS)),)
export GOFLAGS := $(strip -trimpath $(GOFLAGS))
endif

.PHONY: all build test race unit golden fmt vet lint image fuzz bench manifests chart tools apiserver kueue apiserver-test operator-test scheduling-test cluster-day-test cluster-week-test kueue-test multicluster-test flux-test clean

all: build

# bin/nrl-k8s, the CLI, and bin/nrl-krm, the KRM function alone (`nrl-k8s
# fn` without the CLI's cobra, client-go and Helm: the image's entrypoint and
# the examples' exec function; docs/krm.md).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./fn/cmd/nrl-k8s
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(KRM_BIN) ./fn/cmd/nrl-krm

tools:
	./hack/tools.sh

# The pinned kube-apiserver and etcd of the real-API-server tier
# (tests/apiserver), built once into ~/.cache/nrl-tools (cold: 4 min or more).
APISERVER_ENV = apiserver_env=$$(./hack/apiserver.sh) && eval "$$apiserver_env"
apiserver:
	./hack/apiserver.sh

# The pinned Kueue manager and its install manifests for the Kueue tier
# (tests/kueue), built from the nested module hack/kueue (needs `make tools`
# for kustomize; cold: about 3 minutes on 2 cores after kube-apiserver).
KUEUE_ENV = kueue_env=$$(./hack/kueue.sh) && eval "$$kueue_env"
kueue:
	$(TOOLS_ENV); ./hack/kueue.sh

# Every test, the end-to-end ones against the pinned kustomize and helm CLIs
# and a real kube-apiserver too (a missing one fails instead of skipping).
# The container tier (tests/container) runs `make image`'s image under
# podman as kpt and kustomize run it; without podman and runc it is skipped,
# said here, unless CI=true or NRL_REQUIRE_PODMAN is set (.ci/run installs them).
# -vet=off here and in race: `make vet` (a prerequisite) ran every analyzer
# go test's own vet would, on the same files (no cgo or race build tags
# here), and go test's subset is a different cache key: left on, each of the
# two test runs re-analysed every dependency for vet facts (a cold run:
# about 4 CPU-minutes; docs/performance.md, "Cold CI").
test: vet lint build image race
	@command -v podman >/dev/null && { command -v runc >/dev/null || test -x /usr/sbin/runc; } || \
	  echo "make test: podman or runc not installed: the container tier (tests/container) is skipped$${CI:+ and fails, CI=true}$${NRL_REQUIRE_PODMAN:+ and fails, NRL_REQUIRE_PODMAN is set}; apt-get install podman runc"
	$(TOOLS_ENV); $(APISERVER_ENV) && $(KUEUE_ENV) && NRL_REQUIRE_APISERVER=1 NRL_IMAGE_TAR=$(CURDIR)/dist/nrl-k8s-image.tar $(GO) test -count=1 -vet=off -timeout 20m ./...
	@# The multicluster tier last, alone: its three API servers and Kueue
	@# managers (2.7 GB) never share the machine with the other tiers.
	$(MAKE) multicluster-test

# The race detector over every package whose tests run goroutines, found
# from the code by hack/racepkgs (`go run ./hack/racepkgs -v` says why each
# is there; its notRaced table names the one left out, with why). It needs
# cgo: Debian's gcc, which .ci/run installs when missing; the finder itself
# and everything else stay CGO_ENABLED=0.
# -short: the tiers that drive the pinned CLIs run in `go test ./...` above.
race:
	pkgs=$$(CGO_ENABLED=0 $(GO) run ./hack/racepkgs) && CGO_ENABLED=1 $(GO) test -race -short -count=1 -vet=off $$pkgs

# Only the real-API-server tier: server-side dry-run apply of every golden,
# example and shipped-profile render.
apiserver-test:
	$(APISERVER_ENV) && NRL_REQUIRE_APISERVER=1 $(GO) test -count=1 -v ./tests/apiserver

# Only the operator tier: KubeRay v1.5.0's reconcilers inside the real API
# server (cluster admission on) create every run's Pods (tests/operator).
operator-test:
	$(APISERVER_ENV) && NRL_REQUIRE_APISERVER=1 $(GO) test -count=1 -v ./tests/operator

# Only the scheduling tier: the real kube-scheduler v1.36.3 places what
# KubeRay's reconcilers create on fleets shaped like each profile's target
# (tests/scheduling, internal/scheduler).
scheduling-test:
	$(APISERVER_ENV) && NRL_REQUIRE_APISERVER=1 $(GO) test -count=1 -v ./tests/scheduling

# Opt-in, not in `test`: preflight --nodes against the real kube-scheduler
# on a 1,045-node cluster, run by run (TestClusterDay in tests/scheduling),
# and a day of 200 runs queued through four teams' Kueue ClusterQueues on
# 1,050 nodes (TestClusterDayQueued in tests/kueue; NRL_CLUSTER_DAY_RUNS,
# NRL_CLUSTER_DAY_REPORT: the JSON report's path). One package at a time:
# each starts its own API server with a thousand nodes.
cluster-day-test:
	$(TOOLS_ENV); $(APISERVER_ENV) && $(KUEUE_ENV) && NRL_CLUSTER_DAY=1 NRL_REQUIRE_APISERVER=1 $(GO) test -count=1 -p 1 -v -timeout 60m -run 'TestClusterDay' ./tests/scheduling ./tests/kueue

# The week beside the day (tests/kueue TestClusterWeekQueued): priorities,
# a cohort, preemption, runs stopped in Git; opt-in by the same variable.
cluster-week-test:
	$(TOOLS_ENV); $(APISERVER_ENV) && $(KUEUE_ENV) && NRL_CLUSTER_DAY=1 NRL_REQUIRE_APISERVER=1 $(GO) test -count=1 -v -timeout 30m -run 'TestClusterWeekQueued' ./tests/kueue

# Only the Kueue tier: Kueue v0.17.0's own manager (webhooks, Workloads,
# admission) beside KubeRay's reconcilers (tests/kueue, internal/kueue).
kueue-test:
	$(TOOLS_ENV); $(APISERVER_ENV) && $(KUEUE_ENV) && NRL_REQUIRE_APISERVER=1 $(GO) test -count=1 -v ./tests/kueue

# The multicluster tier: a MultiKueue manager and two workers (three API
# servers, three Kueue managers, KubeRay in-process per worker;
# internal/multicluster). `make test` runs it last, alone; `go test ./...`
# skips it without NRL_MULTICLUSTER=1.
multicluster-test:
	$(TOOLS_ENV); $(APISERVER_ENV) && $(KUEUE_ENV) && NRL_MULTICLUSTER=1 NRL_REQUIRE_APISERVER=1 $(GO) test -count=1 -vet=off -v -timeout 10m ./tests/multicluster

# Only the Flux tier: runs reconciled as Flux's kustomize-controller
# reconciles one Kustomization per run (fluxcd/pkg/ssa), against KubeRay's
# reconcilers and Kueue's manager (tests/flux, internal/fluxapply).
flux-test:
	$(TOOLS_ENV); $(APISERVER_ENV) && $(KUEUE_ENV) && NRL_REQUIRE_APISERVER=1 $(GO) test -count=1 -v ./tests/flux

# Unit tests only (no CLIs needed).
unit:
	$(GO) test -count=1 -short ./...

# Regenerate every golden file; review the diff before committing.
# -update is internal/golden's one switch: only the packages that import it
# take the flag (go test rejects unknown flags), so they are found by that import.
GOLDEN_PKGS = $(shell grep -rl -e '"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"' --include=*_test.go fn tests internal | xargs -n1 dirname | sort -u | sed -e 's,^,./,')
# The examples' KRM inputs are regenerated from their runs first (adding a
# run is one line in runs.yaml), then every golden.
KUSTOMIZE_RUNS = examples/kustomize/run.yaml examples/kustomize/runs.yaml
KPT_RUNS       = examples/kpt/run.yaml
golden:
	$(GO) run ./fn/cmd/nrl-k8s kustomize-inputs -k examples/kustomize --root . --write $(KUSTOMIZE_RUNS)
	$(GO) run ./fn/cmd/nrl-k8s kustomize-inputs -k examples/kustomize-container --root . --write examples/kustomize-container/run.yaml
	$(GO) run ./fn/cmd/nrl-k8s kustomize-inputs -k examples/kustomize-identity --root . --write examples/kustomize-identity/runs.yaml
	$(GO) run ./fn/cmd/nrl-k8s kustomize-inputs --kpt examples/kpt --root . --write $(KPT_RUNS)
	$(GO) test -count=1 $(GOLDEN_PKGS) -run 'Golden' -update

# golangci-lint v2.15.0 (hack/tools.sh) with .golangci.yml: errorlint,
# goimports and the standard set, clean on the whole module.
lint:
	$(TOOLS_ENV); $$NRL_GOLANGCI_LINT run ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

clean:
	rm -rf bin dist

# Container image of the KRM function, built without Docker (go-containerregistry):
# a docker-archive tarball and an OCI image layout of the same image (one digest).
# Entrypoint nrl-krm; nrl-k8s beside it for the chart's test hook.
image:
	mkdir -p dist
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o dist/nrl-k8s-linux-amd64 ./fn/cmd/nrl-k8s
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o dist/nrl-krm-linux-amd64 ./fn/cmd/nrl-krm
	$(GO) run ./fn/cmd/build-image --binary dist/nrl-krm-linux-amd64 --cli dist/nrl-k8s-linux-amd64 --tag $(IMAGE) \
	  --out dist/nrl-k8s-image.tar --layout dist/nrl-k8s-oci > dist/nrl-k8s-image.digest
	@echo "docker-archive dist/nrl-k8s-image.tar, OCI layout dist/nrl-k8s-oci, digest $$(cat dist/nrl-k8s-image.digest)"

# Regenerate the chart's packaged profile data from profiles/ (single source: the Go engine),
# lint it with both pinned Helms, and package it reproducibly (helm v3's own
# `helm package` stamps the current time into the archive).
chart: build
	$(BIN) chart-data --chart charts/nemo-rl-run --index profiles/index.yaml
	$(TOOLS_ENV); for h in $$NRL_HELM3 $$NRL_HELM4; do \
	  for f in charts/nemo-rl-run/ci/*-values.yaml; do $$h lint --strict --kube-version 1.34.0 charts/nemo-rl-run -f $$f || exit 1; done; done
	$(BIN) chart-package charts/nemo-rl-run -d dist

# Render every run of the example runs repository into its committed output tree.
manifests: build
	$(BIN) render-all --kustomization examples/runs-repo

# Longer fuzzing than CI's smoke run (FUZZTIME=300x FUZZDIRS=fn: .ci/run).
FUZZTIME ?= 60s
FUZZDIRS ?= fn tests
fuzz:
	./hack/fuzz.sh $(FUZZTIME) "$(FUZZDIRS)"

# One package at a time (-p 1): two benchmarks sharing 2 cores measure
# each other. The 1,000-run kustomize cases take about a minute each.
BENCH ?= .
bench:
	$(GO) test -p 1 -timeout 60m -run '^$$' -bench '$(BENCH)' -benchmem ./...
