package check

import (
	"fmt"
	"path"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// CodeSource holds launch.codeSource to the rendered pods' mounts, the only
// place where it takes effect (nrl-k8s renders the same bytes for image and
// lustre): with lustre the code at launch.codePath comes from a volume, so
// every Ray container must mount one at codePath or above it; with image it
// comes from the image, so a mount at codePath or above it hides it (a
// warning: the pod runs the volume's code, which may be what was meant, but
// then the profile says image and runs lustre). Mounts below codePath
// overlay parts of the tree (a dev checkout of one package) and are not
// judged.
func CodeSource(file string, in *profile.Infra, objs []any) diag.List {
	var ds diag.List
	src := in.Launch.CodeSource
	if (src != "lustre" && src != "image") || in.Launch.CodePath == nil || *in.Launch.CodePath == "" {
		return ds
	}
	code := path.Clean(*in.Launch.CodePath)
	for _, o := range objs {
		var ref, base string
		var spec *rayv1.RayClusterSpec
		switch t := o.(type) {
		case *rayv1.RayJob:
			ref, base, spec = "RayJob/"+t.Name, "spec.rayClusterSpec", t.Spec.RayClusterSpec
		case *rayv1.RayCluster:
			ref, base, spec = "RayCluster/"+t.Name, "spec", &t.Spec
		}
		if spec == nil {
			continue
		}
		where := "output " + ref + " " + base
		templates := []struct {
			field string
			spec  *corev1.PodSpec
		}{{where + ".headGroupSpec.template.spec", &spec.HeadGroupSpec.Template.Spec}}
		for i := range spec.WorkerGroupSpecs {
			templates = append(templates, struct {
				field string
				spec  *corev1.PodSpec
			}{fmt.Sprintf("%s.workerGroupSpecs[%d].template.spec", where, i), &spec.WorkerGroupSpecs[i].Template.Spec})
		}
		for _, t := range templates {
			if len(t.spec.Containers) == 0 {
				continue
			}
			// The Ray container is the first (KubeRay's convention).
			c := &t.spec.Containers[0]
			m, ok := mountOver(c.VolumeMounts, code)
			field := t.field + ".containers[0].volumeMounts"
			switch {
			case src == "lustre" && !ok:
				ds.Errorf(file, field, "launch.codeSource is lustre but container %q mounts no volume at launch.codePath %s or above it; expected a volumeMount there (the code is read from the volume), or codeSource image", c.Name, code)
				return ds // one object says it; the others are the same profile
			case src == "image" && ok:
				ds.Warnf(file, field, "launch.codeSource is image but container %q mounts volume %q at %s, over launch.codePath %s: the pod runs the volume's code, not the image's; expected codeSource lustre, or no mount at or above codePath", c.Name, m.Name, m.MountPath, code)
				return ds
			}
		}
	}
	return ds
}

// mountOver finds the mount at dir or at one of its ancestors.
func mountOver(mounts []corev1.VolumeMount, dir string) (corev1.VolumeMount, bool) {
	for _, m := range mounts {
		mp := path.Clean(m.MountPath)
		if mp == dir || mp == "/" || strings.HasPrefix(dir, mp+"/") {
			return m, true
		}
	}
	return corev1.VolumeMount{}, false
}
