# Image for the nrl-k8s KRM function. Without Docker, the same kind of image
# can be built with: go run ./fn/cmd/build-image --binary <static binary>.

# Build on the native platform and cross-compile: a static Go binary needs no
# emulation, so `docker buildx build --platform linux/arm64` stays fast.
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# The version `nrl-k8s version` reports (make image passes the same to the
# image it builds): docker build --build-arg VERSION=v0.1.0 .
ARG VERSION=dev
WORKDIR /src
# Download modules in their own layer so source edits don't refetch them.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO off: the final image has no libc. -trimpath and no symbols keep the
# binary small and free of builder paths; -X sets the reported version.
# nrl-krm is the KRM function alone (the entrypoint); nrl-k8s, the CLI, is
# beside it for the chart's test hook (`nrl-k8s status`).
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli.Version=${VERSION}" \
    -o /out/ ./fn/cmd/nrl-k8s ./fn/cmd/nrl-krm

# distroless/static: CA certificates, tzdata and a nonroot user, no shell.
FROM gcr.io/distroless/static:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.source="https://github.com/nemo-rl-krm/nemo-rl-krm" \
      org.opencontainers.image.title="nrl-k8s" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/nrl-k8s /out/nrl-krm /usr/local/bin/
# Same uid:gid as the ociimage build, so both images behave alike under
# runAsNonRoot.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/nrl-krm"]
