// Package ociimage builds a minimal, reproducible container image around
// statically linked Go binaries (the function's entrypoint and any others
// beside it), without needing a Docker engine.
//
// The image is built from scratch: one layer holding the binaries, a sticky
// /tmp, a home directory and just enough of /etc/passwd and /etc/group for
// the image's non-root user 65532 ("nonroot") and for "nobody" (65534), the
// user kpt's and kustomize's container runtimes run a function as
// (`--user nobody`: without a passwd entry the runtime refuses to start it).
// There is no shell and no libc, which is why Build refuses dynamically
// linked binaries.
//
// Every timestamp, owner and entry order is fixed, so the same inputs always
// produce the same image digest.
package ociimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const (
	// DefaultBinaryDest is where the entrypoint's binary lands in the image
	// by default: nrl-krm, the KRM function alone.
	DefaultBinaryDest = "/usr/local/bin/nrl-krm"
	// CLIBinaryDest is where the image holds the nrl-k8s CLI beside it
	// (Options.Extra): the chart's test hook runs `nrl-k8s status` from it.
	CLIBinaryDest = "/usr/local/bin/nrl-k8s"
	// DefaultUser is the distroless "nonroot" uid:gid, so pods pass
	// runAsNonRoot checks without extra securityContext.
	DefaultUser = "65532:65532"
	// DefaultArchitecture is the GOARCH-style architecture of the image.
	DefaultArchitecture = "amd64"

	nonrootID   = 65532
	nonrootHome = "/home/nonroot"
	// nobodyID is the overflow uid/gid every Linux distribution names
	// nobody; kpt and kustomize pass `--user nobody` to docker/podman.
	nobodyID = 65534
)

// epoch is used for every timestamp so rebuilding never changes the digest.
var epoch = time.Unix(0, 0).UTC()

// elfMachine maps the architectures we accept to the ELF machine the binary
// must have; building an arm64 image around an amd64 binary would only fail
// at container start with "exec format error".
var elfMachine = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"riscv64": elf.EM_RISCV,
}

// Options describes the image to build. Zero values get the defaults noted
// on each field.
type Options struct {
	// BinaryPath is the host path of a statically linked linux binary. Required.
	BinaryPath string
	// BinaryDest is the absolute path of the binary in the image.
	// Default DefaultBinaryDest.
	BinaryDest string
	// Entrypoint defaults to [BinaryDest].
	Entrypoint []string
	// Extra are more statically linked binaries for the same layer, each
	// checked as BinaryPath is (the nrl-k8s CLI at CLIBinaryDest).
	Extra []Binary
	// Architecture is a GOARCH value. Default DefaultArchitecture.
	Architecture string
	// OS must be "linux" (the default); it is a field so the config says
	// what the caller meant rather than what we assumed.
	OS string
	// User is "uid:gid" or a name; default DefaultUser.
	User string
	// Labels become image config labels, e.g. org.opencontainers.image.*.
	Labels map[string]string
	// Created is the image creation time; default the Unix epoch so the
	// digest depends only on the inputs, not on when Build ran.
	Created time.Time
}

// Binary is one more binary of the image: its host path and its absolute
// path in the image.
type Binary struct {
	Path, Dest string
}

// withDefaults returns a copy of o with defaults filled in and validated.
func (o Options) withDefaults() (Options, error) {
	if o.BinaryPath == "" {
		return o, errors.New("ociimage: BinaryPath is required")
	}
	if o.BinaryDest == "" {
		o.BinaryDest = DefaultBinaryDest
	}
	dests := map[string]bool{}
	for _, b := range append([]Binary{{o.BinaryPath, o.BinaryDest}}, o.Extra...) {
		if b.Path == "" {
			return o, fmt.Errorf("ociimage: the binary for %q has no path", b.Dest)
		}
		if !path.IsAbs(b.Dest) || path.Clean(b.Dest) != b.Dest || b.Dest == "/" {
			return o, fmt.Errorf("ociimage: binary destination %q must be a clean absolute file path", b.Dest)
		}
		if dests[b.Dest] {
			return o, fmt.Errorf("ociimage: two binaries at %q", b.Dest)
		}
		dests[b.Dest] = true
	}
	o.Extra = append([]Binary(nil), o.Extra...)
	if len(o.Entrypoint) == 0 {
		o.Entrypoint = []string{o.BinaryDest}
	} else {
		// Copy so later changes to the caller's slice can't alter the image.
		o.Entrypoint = append([]string(nil), o.Entrypoint...)
	}
	if o.Architecture == "" {
		o.Architecture = DefaultArchitecture
	}
	if _, ok := elfMachine[o.Architecture]; !ok {
		return o, fmt.Errorf("ociimage: unsupported architecture %q", o.Architecture)
	}
	if o.OS == "" {
		o.OS = "linux"
	}
	if o.OS != "linux" {
		return o, fmt.Errorf("ociimage: unsupported OS %q (only linux)", o.OS)
	}
	if o.User == "" {
		o.User = DefaultUser
	}
	if o.Created.IsZero() {
		o.Created = epoch
	}
	labels := make(map[string]string, len(o.Labels))
	for k, v := range o.Labels {
		labels[k] = v
	}
	o.Labels = labels
	return o, nil
}

// Build creates the image described by opts. Each binary is read once into
// memory, so the layer cannot change if a file is rewritten afterwards.
func Build(opts Options) (v1.Image, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	bins := map[string][]byte{}
	for _, b := range append([]Binary{{o.BinaryPath, o.BinaryDest}}, o.Extra...) {
		data, err := os.ReadFile(b.Path)
		if err != nil {
			return nil, fmt.Errorf("ociimage: read binary: %w", err)
		}
		if err := checkStatic(data, o.Architecture); err != nil {
			return nil, fmt.Errorf("ociimage: %s: %w", b.Path, err)
		}
		bins[b.Dest] = data
	}
	layerTar, err := rootfsTar(bins)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("ociimage: layer: %w", err)
	}

	created := v1.Time{Time: o.Created.UTC()}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: o.Architecture,
		OS:           o.OS,
		Created:      created,
		Config: v1.Config{
			// Only the binary's directory: there is nothing else to run.
			Env:        []string{"PATH=" + path.Dir(o.BinaryDest)},
			Entrypoint: o.Entrypoint,
			User:       o.User,
			WorkingDir: "/",
			Labels:     o.Labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, fmt.Errorf("ociimage: config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		// A history entry per layer keeps `docker history` and some
		// registries' UIs from showing a mismatch.
		History: v1.History{Created: created, CreatedBy: "ociimage.Build " + o.BinaryDest},
	})
	if err != nil {
		return nil, fmt.Errorf("ociimage: append layer: %w", err)
	}
	return img, nil
}

// checkStatic rejects binaries that cannot run in a scratch image: non-ELF
// files, the wrong CPU, or anything needing a dynamic loader (PT_INTERP).
func checkStatic(bin []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("not an ELF binary: %w", err)
	}
	defer func() { _ = f.Close() }() // reads from memory: nothing to flush
	if want := elfMachine[arch]; f.Machine != want {
		return fmt.Errorf("binary is for %s, image architecture %s needs %s", f.Machine, arch, want)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("binary is dynamically linked; build with CGO_ENABLED=0")
		}
	}
	return nil
}

// rootfsTar returns the uncompressed layer with bins (destination →
// content). Entries are written sorted by name (parents sort before
// children) with fixed owners and mtimes, so the bytes depend only on the
// binaries and their destinations.
func rootfsTar(bins map[string][]byte) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\nnobody:x:%d:%d:nobody:/nonexistent:/sbin/nologin\n",
		nonrootID, nonrootID, nonrootHome, nobodyID, nobodyID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\nnobody:x:%d:\n", nonrootID, nobodyID)

	entries := map[string]entry{
		"etc":          dir(0o755, 0),
		"etc/passwd":   file(0o644, []byte(passwd)),
		"etc/group":    file(0o644, []byte(group)),
		"home":         dir(0o755, 0),
		"home/nonroot": dir(0o700, nonrootID), // writable $HOME for tools that cache there
		"tmp":          dir(0o1777, 0),        // sticky and world-writable, like a real /tmp
	}
	dests := make([]string, 0, len(bins))
	for dest := range bins {
		dests = append(dests, dest)
	}
	sort.Strings(dests) // the same error, whichever map order
	for _, dest := range dests {
		rel := strings.TrimPrefix(dest, "/")
		if _, clash := entries[rel]; clash {
			return nil, fmt.Errorf("ociimage: binary destination %q collides with another path of the image", dest)
		}
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if e, ok := entries[d]; ok && e.typ != tar.TypeDir {
				return nil, fmt.Errorf("ociimage: binary destination %q is under file /%s", dest, d)
			} else if !ok {
				entries[d] = dir(0o755, 0)
			}
		}
		entries[rel] = file(0o755, bins[dest])
	}

	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := entries[n]
		hdr := &tar.Header{
			Typeflag: e.typ,
			Name:     n,
			Mode:     e.mode,
			Uid:      e.id,
			Gid:      e.id,
			Size:     int64(len(e.data)),
			ModTime:  epoch,
		}
		if e.typ == tar.TypeDir {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("ociimage: tar %s: %w", n, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("ociimage: tar %s: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("ociimage: tar: %w", err)
	}
	return buf.Bytes(), nil
}

type entry struct {
	typ  byte
	mode int64
	id   int // uid and gid
	data []byte
}

func dir(mode int64, id int) entry    { return entry{typ: tar.TypeDir, mode: mode, id: id} }
func file(mode int64, b []byte) entry { return entry{typ: tar.TypeReg, mode: mode, data: b} }

// WriteTarball writes img to path as a `docker load` / `podman load`
// tarball tagged ref (e.g. "ghcr.io/nemo-rl-krm/nrl-k8s:v0.1.0"). A partial
// file is removed on failure so a later load never sees a truncated image.
func WriteTarball(img v1.Image, ref string, path string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("ociimage: tag %q: %w", ref, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("ociimage: write %s: %w", path, err)
	}
	return nil
}

// Digest returns the image manifest digest, e.g. "sha256:…".
func Digest(img v1.Image) (string, error) {
	h, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("ociimage: digest: %w", err)
	}
	return h.String(), nil
}
