package ociimage

import (
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// RefNameAnnotation names the image in an OCI layout's index.json (what
// `skopeo copy oci:DIR:TAG` selects and `crane push DIR` pushes).
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout writes img as an OCI image layout directory (oci-layout,
// index.json, blobs/) holding just this image, its index entry annotated
// with the tag of ref. The directory is replaced: a layout is appended to
// otherwise, and an old image would linger in it.
func WriteLayout(img v1.Image, ref string, dir string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("ociimage: tag %q: %w", ref, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("ociimage: layout %s: %w", dir, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{RefNameAnnotation: tag.TagStr()})); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("ociimage: layout %s: %w", dir, err)
	}
	return nil
}
