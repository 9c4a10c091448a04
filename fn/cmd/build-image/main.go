// Command build-image packages the static nrl-krm binary (the KRM function,
// the image's entrypoint) and, with --cli, the nrl-k8s CLI beside it (the
// chart's test hook runs `nrl-k8s status` from the image) into a container
// image without Docker: a docker-archive tarball (`docker load` /
// `podman load`) and, with --layout, an OCI image layout directory
// (`skopeo copy oci:DIR:TAG ...`, `crane push DIR REF`). It prints the
// image digest (the same for both) so release notes can pin it.
//
//	CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o nrl-krm ./fn/cmd/nrl-krm
//	CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o nrl-k8s ./fn/cmd/nrl-k8s
//	go run ./fn/cmd/build-image --binary nrl-krm --cli nrl-k8s --tag ghcr.io/nemo-rl-krm/nrl-k8s:v0.1.0
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/tooling/ociimage"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "build-image:", err)
		}
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("build-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binary := fs.String("binary", "", "path to the statically linked linux nrl-krm binary, the entrypoint (required)")
	cli := fs.String("cli", "", "path to the statically linked linux nrl-k8s binary, put at "+ociimage.CLIBinaryDest+" (the chart's test hook runs it)")
	tag := fs.String("tag", "ghcr.io/nemo-rl-krm/nrl-k8s:dev", "image reference written into the tarball")
	out := fs.String("out", "nrl-k8s-image.tar", "output tarball path (docker load / podman load)")
	layoutDir := fs.String("layout", "", "also write an OCI image layout directory (skopeo copy oci:DIR, crane push DIR)")
	arch := fs.String("arch", ociimage.DefaultArchitecture, "image architecture (GOARCH), must match the binary")
	version := fs.String("version", "", "org.opencontainers.image.version label (default: the tag's version)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" {
		return errors.New("--binary is required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	ref, err := name.NewTag(*tag)
	if err != nil {
		return fmt.Errorf("--tag: %w", err)
	}
	if *version == "" {
		*version = ref.TagStr()
	}

	var extra []ociimage.Binary
	if *cli != "" {
		extra = append(extra, ociimage.Binary{Path: *cli, Dest: ociimage.CLIBinaryDest})
	}
	img, err := ociimage.Build(ociimage.Options{
		BinaryPath:   *binary,
		Extra:        extra,
		Architecture: *arch,
		Labels: map[string]string{
			"org.opencontainers.image.source":  "https://github.com/nemo-rl-krm/nemo-rl-krm",
			"org.opencontainers.image.title":   "nrl-k8s",
			"org.opencontainers.image.version": *version,
		},
	})
	if err != nil {
		return err
	}
	if err := ociimage.WriteTarball(img, *tag, *out); err != nil {
		return err
	}
	if *layoutDir != "" {
		if err := ociimage.WriteLayout(img, *tag, *layoutDir); err != nil {
			return err
		}
	}
	digest, err := ociimage.Digest(img)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, digest)
	return err
}
