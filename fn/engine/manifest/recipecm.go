package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// launch.recipeSource=configMap ships the checked recipe with the run: its
// `defaults:` chain merged into one file, in a ConfigMap mounted into the
// head pod (where the driver runs), and every --config pointed at it. What
// the reviewer reads in the rendered ConfigMap is what trains.
const (
	recipeVolume = "nemo-rl-recipe"
	// maxConfigMapBytes is the API server's limit on a ConfigMap's data.
	maxConfigMapBytes = 1 << 20
)

// RecipeYAML is the merged recipe as the ConfigMap carries it: sorted keys,
// interpolations left for the driver's OmegaConf to resolve.
func RecipeYAML(recipe *tree.Map) (string, error) {
	js, err := recipe.MarshalJSON()
	if err != nil {
		return "", err
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		return "", err
	}
	if len(y) > maxConfigMapBytes {
		return "", fmt.Errorf("the merged recipe is %d bytes; a ConfigMap holds at most %d", len(y), maxConfigMapBytes)
	}
	return string(y), nil
}

// RecipeHash names a recipe's ConfigMap by its text (the first 10 hex
// digits of its SHA-256): a changed recipe is a new ConfigMap and a changed
// volume in the RayJob's pod template, so an edit of what a started run
// read at start is an edit of the run, which the PR gate and the admission
// policy see and refuse (docs/gitops.md). The chart computes the same name
// (sha256sum of the `recipe` value, chartgen.SentinelRecipeHash).
func RecipeHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])[:10]
}

// recipeConfigMap holds the recipe for the RayJob named job and mounts it
// into the head pod of spec. The ConfigMap is immutable: named by its
// content, it never changes in place, so a Pod KubeRay re-creates mounts
// the recipe the run started with.
func (b *builder) recipeConfigMap(id identity, c *profile.Cluster, job string, spec *corev1.PodTemplateSpec) (*corev1.ConfigMap, error) {
	in, p := b.in, b.p
	name := job + "-recipe-" + RecipeHash(p.RecipeYAML)
	for _, v := range spec.Spec.Volumes {
		if v.Name == recipeVolume {
			return nil, errAt("kuberay.training.spec.headGroupSpec.template.spec.volumes", "already has a volume named %q; expected that name free for launch.recipeSource=configMap", recipeVolume)
		}
	}
	spec.Spec.Volumes = append(spec.Spec.Volumes, corev1.Volume{Name: recipeVolume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}},
	}})
	for i := range spec.Spec.Containers {
		spec.Spec.Containers[i].VolumeMounts = append(spec.Spec.Containers[i].VolumeMounts,
			corev1.VolumeMount{Name: recipeVolume, MountPath: path.Dir(profile.RecipeMountPath), ReadOnly: true})
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   in.Namespace,
			Labels:      id.objectLabels(in.Labels, c.Labels, nil),
			Annotations: id.objectAnnotations(in.Annotations, nil),
		},
		Immutable: ptr(true),
		Data:      map[string]string{path.Base(profile.RecipeMountPath): p.RecipeYAML},
	}, nil
}
