package kustomizeconf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// render renders a shipped example run in process.
func render(t *testing.T, recipePath, profilePath string, mode runparams.Mode, name string, overrides ...string) []byte {
	t.Helper()
	root := testenv.RepoRoot(t)
	run := fixtures.As(mode)
	run.Name = name
	return fixtures.Stream(t, pipeline.Request{
		Recipe: root + "/" + recipePath, Profile: root + "/" + profilePath, Namespace: "default", Overrides: overrides, Run: run,
	})
}

const (
	qwenRecipe   = "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml"
	qwenProfile  = "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"
	ultraRecipe  = "recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml"
	ultraProfile = "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml"
)

// build runs krusty on a directory holding files; the OpenAPI schema is
// global state in kyaml, so it is reset around every build.
func build(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	openapi.ResetOpenAPI()
	t.Cleanup(openapi.ResetOpenAPI)
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err)
	out, err := m.AsYaml()
	require.NoError(t, err)
	return out
}

func shipped(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), file))
	require.NoError(t, err)
	return b
}

// objects splits a stream into kind/name → document.
func objects(t *testing.T, stream []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, doc := range bytes.Split(stream, []byte("\n---\n")) {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		require.NoError(t, yaml.Unmarshal(doc, &meta))
		if meta.Kind != "" {
			out[meta.Kind+"/"+meta.Metadata.Name] = doc
		}
	}
	return out
}

// TestOpenAPIStrategicMerge: with the shipped schema under `openapi:`, a
// strategic-merge patch naming one worker group changes its replicas and
// keeps its template (GPUs, claims), and a patch adding one env var to a
// container keeps the others. Without the schema the same patch replaces
// the worker groups, which is what the schema is for.
func TestOpenAPIStrategicMerge(t *testing.T) {
	run := render(t, qwenRecipe, qwenProfile, runparams.RayJob, "smp")
	patch := []byte(`apiVersion: ray.io/v1
kind: RayJob
metadata: {name: smp}
spec:
  rayClusterSpec:
    workerGroupSpecs:
    - groupName: gpu-workers-segment-1
      replicas: 2
      template:
        spec:
          containers:
          - name: ray-worker
            env:
            - {name: PATCHED, value: "yes"}
`)
	kustomization := func(withSchema bool) []byte {
		k := "resources: [run.yaml]\npatches:\n- path: patch.yaml\n"
		if withSchema {
			k += "openapi:\n  path: kuberay.json\n"
		}
		return []byte(k)
	}
	var before rayv1.RayJob
	require.NoError(t, yaml.Unmarshal(objects(t, run)["RayJob/smp"], &before))
	orig := before.Spec.RayClusterSpec.WorkerGroupSpecs

	out := build(t, map[string][]byte{"kustomization.yaml": kustomization(true), "run.yaml": run,
		"patch.yaml": patch, "kuberay.json": shipped(t, OpenAPIFile)})
	var job rayv1.RayJob
	require.NoError(t, yaml.Unmarshal(objects(t, out)["RayJob/smp"], &job))
	groups := job.Spec.RayClusterSpec.WorkerGroupSpecs
	require.Len(t, groups, len(orig), "every worker group stays")
	byName := map[string]rayv1.WorkerGroupSpec{}
	for _, g := range orig {
		byName[g.GroupName] = g
	}
	for _, g := range groups {
		o, ok := byName[g.GroupName]
		require.True(t, ok, "group %s was in the render", g.GroupName)
		c := g.Template.Spec.Containers[0]
		oc := o.Template.Spec.Containers[0]
		require.Equal(t, oc.Resources.Limits, c.Resources.Limits, "%s keeps its GPUs", g.GroupName)
		require.Equal(t, o.Template.Spec.ResourceClaims, g.Template.Spec.ResourceClaims, "%s keeps its claims", g.GroupName)
		if g.GroupName != "gpu-workers-segment-1" {
			require.Equal(t, *o.Replicas, *g.Replicas)
			require.Equal(t, oc.Env, c.Env)
			continue
		}
		require.Equal(t, int32(2), *g.Replicas)
		require.ElementsMatch(t, append(append([]corev1.EnvVar{}, oc.Env...), corev1.EnvVar{Name: "PATCHED", Value: "yes"}), c.Env,
			"the env var is added to the others (kyaml puts the patch's first)")
		require.Equal(t, oc.VolumeMounts, c.VolumeMounts)
	}

	// Without the schema kustomize replaces the list: the test above can fail.
	out = build(t, map[string][]byte{"kustomization.yaml": kustomization(false), "run.yaml": run, "patch.yaml": patch})
	require.NoError(t, yaml.Unmarshal(objects(t, out)["RayJob/smp"], &job))
	require.Len(t, job.Spec.RayClusterSpec.WorkerGroupSpecs, 1, "kustomize without the schema replaces the worker groups")
}

// TestConfigurationRenamesEveryReference: an overlay with namePrefix over
// two runs (a rayjob whose recipe ships in a ConfigMap, a raycluster run
// with a profile deployment's Service, clusters selected by name) and the
// ServiceAccount, Secret and claims the profiles name, with the shipped
// configuration: every kind is renamed and every reference in the Ray pod
// templates names an object of the output.
func TestConfigurationRenamesEveryReference(t *testing.T) {
	job := render(t, qwenRecipe, qwenProfile, runparams.RayJob, "cm", "infra.launch.recipeSource=configMap")
	clusters := render(t, ultraRecipe, ultraProfile, runparams.RayCluster, "rc")
	// What the profiles reference and the cluster provides, as an overlay's
	// own objects.
	extra := []byte(`apiVersion: v1
kind: ServiceAccount
metadata: {name: nemo-rl-endpoint-registry}
---
apiVersion: v1
kind: Secret
metadata: {name: alice-secrets}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: rl-workspace}
spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 1Gi}}}
`)
	files := map[string][]byte{"job.yaml": job, "clusters.yaml": clusters, "extra.yaml": extra,
		"nrl-k8s.configuration.yaml": Configuration()}
	kustomization := "resources: [job.yaml, clusters.yaml, extra.yaml]\nnamePrefix: exp1-\n"
	files["kustomization.yaml"] = []byte(kustomization + "configurations: [nrl-k8s.configuration.yaml]\n")
	refs, missing := references(t, objects(t, build(t, files)))
	require.Empty(t, missing, "every reference names an object of the output")
	for _, kind := range []string{"ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim",
		"ResourceClaimTemplate", "ComputeDomain", "RayCluster", "Service"} {
		require.NotEmpty(t, refs[kind], "a %s reference is checked", kind)
		for _, r := range refs[kind] {
			require.True(t, strings.HasPrefix(r, "exp1-"), "%s reference %q renamed", kind, r)
		}
	}

	// Without the configuration references break: the check can fail.
	files["kustomization.yaml"] = []byte(kustomization)
	_, missing = references(t, objects(t, build(t, files)))
	require.NotEmpty(t, missing)
}

// references collects, by referenced kind, every name the Ray pod
// templates and RayJobs hold, and the ones naming no object of objs
// (a claim template may be a ComputeDomain's channel, named by it).
func references(t *testing.T, objs map[string][]byte) (map[string][]string, []string) {
	t.Helper()
	refs := map[string][]string{}
	var missing []string
	has := func(kind, name string) bool {
		_, ok := objs[kind+"/"+name]
		return ok
	}
	add := func(kind, name string, ok bool) {
		refs[kind] = append(refs[kind], name)
		if !ok {
			missing = append(missing, kind+"/"+name)
		}
	}
	channels := computeDomainChannels(t, objs)
	services := serviceNames(objs)
	pod := func(p corev1.PodSpec) {
		if p.ServiceAccountName != "" {
			add("ServiceAccount", p.ServiceAccountName, has("ServiceAccount", p.ServiceAccountName))
		}
		for _, v := range p.Volumes {
			switch {
			case v.ConfigMap != nil:
				add("ConfigMap", v.ConfigMap.Name, has("ConfigMap", v.ConfigMap.Name))
			case v.PersistentVolumeClaim != nil:
				add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName, has("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName))
			case v.Secret != nil:
				add("Secret", v.Secret.SecretName, has("Secret", v.Secret.SecretName))
			}
		}
		for _, c := range p.ResourceClaims {
			if n := c.ResourceClaimTemplateName; n != nil {
				if channels[*n] || strings.HasPrefix(*n, "exp1-compute-domain") || strings.HasPrefix(*n, "compute-domain") {
					add("ComputeDomain", *n, channels[*n])
				} else {
					add("ResourceClaimTemplate", *n, has("ResourceClaimTemplate", *n))
				}
			}
		}
		for _, c := range append(append([]corev1.Container{}, p.InitContainers...), p.Containers...) {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					add("Secret", e.ValueFrom.SecretKeyRef.Name, has("Secret", e.ValueFrom.SecretKeyRef.Name))
				}
				if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
					add("ConfigMap", e.ValueFrom.ConfigMapKeyRef.Name, has("ConfigMap", e.ValueFrom.ConfigMapKeyRef.Name))
				}
				if strings.HasSuffix(e.Name, "_HOST") && strings.Contains(e.Value, "ns-tools") {
					add("Service", e.Value, services[e.Value])
				}
			}
			for _, f := range c.EnvFrom {
				if f.SecretRef != nil {
					add("Secret", f.SecretRef.Name, has("Secret", f.SecretRef.Name))
				}
			}
		}
	}
	cluster := func(s *rayv1.RayClusterSpec) {
		pod(s.HeadGroupSpec.Template.Spec)
		for _, g := range s.WorkerGroupSpecs {
			pod(g.Template.Spec)
		}
	}
	for key, doc := range objs {
		kind, _, _ := strings.Cut(key, "/")
		switch kind {
		case "RayJob":
			var j rayv1.RayJob
			require.NoError(t, yaml.Unmarshal(doc, &j))
			if j.Spec.RayClusterSpec != nil {
				cluster(j.Spec.RayClusterSpec)
			}
			if c := j.Spec.ClusterSelector["ray.io/cluster"]; c != "" {
				add("RayCluster", c, has("RayCluster", c))
			}
		case "RayCluster":
			var c rayv1.RayCluster
			require.NoError(t, yaml.Unmarshal(doc, &c))
			cluster(&c.Spec)
		}
	}
	return refs, missing
}

// computeDomainChannels is the set of claim template names the ComputeDomains
// of objs name as their channel.
func computeDomainChannels(t *testing.T, objs map[string][]byte) map[string]bool {
	t.Helper()
	channels := map[string]bool{}
	for key, doc := range objs {
		if strings.HasPrefix(key, "ComputeDomain/") {
			var cd struct {
				Spec struct {
					Channel struct {
						ResourceClaimTemplate struct {
							Name string `json:"name"`
						} `json:"resourceClaimTemplate"`
					} `json:"channel"`
				} `json:"spec"`
			}
			require.NoError(t, yaml.Unmarshal(doc, &cd))
			channels[cd.Spec.Channel.ResourceClaimTemplate.Name] = true
		}
	}
	return channels
}

// serviceNames is the set of the Services' names in objs.
func serviceNames(objs map[string][]byte) map[string]bool {
	services := map[string]bool{}
	for key := range objs {
		if name, ok := strings.CutPrefix(key, "Service/"); ok {
			services[name] = true
		}
	}
	return services
}

// TestOpenAPIKeepsWorkloadKeys: kustomize reads only the custom schema once
// `openapi:` names one, so the file carries the workload kinds' keys too: a
// Deployment patch beside the Ray ones still merges its containers.
func TestOpenAPIKeepsWorkloadKeys(t *testing.T) {
	deploy := []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - {name: a, image: x, env: [{name: A, value: "1"}]}
      - {name: b, image: y}
`)
	patch := []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {template: {spec: {containers: [{name: a, env: [{name: B, value: "2"}]}]}}}
`)
	out := build(t, map[string][]byte{"kustomization.yaml": []byte("resources: [d.yaml]\npatches: [{path: p.yaml}]\nopenapi: {path: kuberay.json}\n"),
		"d.yaml": deploy, "p.yaml": patch, "kuberay.json": shipped(t, OpenAPIFile)})
	var d appsv1.Deployment
	require.NoError(t, yaml.Unmarshal(out, &d))
	require.Len(t, d.Spec.Template.Spec.Containers, 2)
	require.Len(t, d.Spec.Template.Spec.Containers[0].Env, 2)
}
