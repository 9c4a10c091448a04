package chartgen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// helmHooks renders the chart in process and returns its hook manifests
// (helm.sh/hook), as Helm stores them in the release, by kind.
func helmHooks(t *testing.T, c *chart.Chart, release string, vals map[string]any, ns string) (map[string]string, error) {
	t.Helper()
	caps := *chartutil.DefaultCapabilities
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.34.0", Major: "1", Minor: "34"}
	rv, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: release, Namespace: ns, Revision: 1, IsInstall: true}, &caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(c, rv)
	if err != nil {
		return nil, err
	}
	delete(files, c.Name()+"/templates/NOTES.txt")
	hooks, _, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, h := range hooks {
		var head struct{ Kind string }
		require.NoError(t, yaml.Unmarshal([]byte(h.Manifest), &head))
		require.NotContains(t, out, head.Kind, "one %s hook", head.Kind)
		out[head.Kind] = h.Manifest
		require.Equal(t, []string{"test"}, hookEvents(h.Events), "%s runs on helm test only", head.Kind)
	}
	return out, nil
}

func hookEvents[E ~string](evs []E) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e)
	}
	return out
}

// makeVar reads `NAME ?= value` from the Makefile.
func makeVar(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(\S+)$`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "Makefile: %s ?= ...", name)
	return m[1]
}

// TestHelmTestHook: with test.enabled the chart carries a helm test suite:
// nrl-k8s status for the release in the project's image, as a
// ServiceAccount whose Role only reads, in a Pod Pod Security restricted
// admits; without it (the default) nothing of it renders and the run's
// manifest is the same.
func TestHelmTestHook(t *testing.T) {
	c := loadChart(t)
	base := map[string]any{"profile": "generic-single-node-8gpu", "user": "ann"}
	with := func(extra map[string]any) map[string]any {
		v := map[string]any{}
		for k, val := range base {
			v[k] = val
		}
		for k, val := range extra {
			v[k] = val
		}
		return v
	}

	// The default image is the one `make image` builds of this version.
	version := makeVar(t, "VERSION")
	image := strings.ReplaceAll(makeVar(t, "IMAGE"), "$(VERSION)", version)
	assert.Equal(t, image, chartgen.DefaultTestImage, "the Makefile's IMAGE")
	assert.Equal(t, version, c.Metadata.AppVersion, "Chart.yaml appVersion is the Makefile's VERSION")
	assert.Equal(t, map[string]any{"enabled": false, "image": image}, c.Values["test"], "values.yaml test")

	hooks, err := helmHooks(t, c, "exp-1", base, "team-a")
	require.NoError(t, err)
	assert.Empty(t, hooks, "off by default")
	plain, _, err := helmTemplateNamed(c, "exp-1", base, "team-a")
	require.NoError(t, err)
	on, _, err := helmTemplateNamed(c, "exp-1", with(map[string]any{"test": map[string]any{"enabled": true}}), "team-a")
	require.NoError(t, err)
	assert.Equal(t, plain, on, "the run's own objects do not change")

	_, err = helmHooks(t, c, "exp-1", with(map[string]any{"test": map[string]any{"enabled": true, "image": ""}}), "team-a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at '/test/image': minLength: got 0, want 1")

	for _, tc := range []struct{ ns, runNS string }{{"team-a", ""}, {"helm-releases", "team-b"}} {
		vals := with(map[string]any{"test": map[string]any{"enabled": true}})
		want := tc.ns
		if tc.runNS != "" {
			vals["namespace"] = tc.runNS
			want = tc.runNS
		}
		hooks, err := helmHooks(t, c, "exp-1", vals, tc.ns)
		require.NoError(t, err)
		require.Equal(t, []string{"Pod", "Role", "RoleBinding", "ServiceAccount"}, tree.SortedKeys(hooks))
		for kind, m := range hooks {
			var meta struct {
				Metadata struct {
					Name, Namespace     string
					Labels, Annotations map[string]string
				}
			}
			require.NoError(t, yaml.Unmarshal([]byte(m), &meta))
			md := meta.Metadata
			assert.Equal(t, "exp-1-status-test", md.Name, kind)
			assert.Equal(t, want, md.Namespace, "%s: in the run's namespace, where status reads", kind)
			assert.NotContains(t, md.Labels, "app.kubernetes.io/instance", "%s: status finds a run by this label; the hook is not part of it", kind)
			assert.Equal(t, "exp-1", md.Labels["app.kubernetes.io/part-of"], kind)
			assert.Equal(t, "helm-test", md.Labels["app.kubernetes.io/component"], kind)
			assert.Equal(t, "test", md.Annotations["helm.sh/hook"], kind)
			if kind == "Pod" {
				assert.Equal(t, "0", md.Annotations["helm.sh/hook-weight"])
				assert.Equal(t, "before-hook-creation", md.Annotations["helm.sh/hook-delete-policy"], "the Pod and its log (the report) stay until the next helm test")
			} else {
				assert.Equal(t, "-1", md.Annotations["helm.sh/hook-weight"], "%s exists before the Pod", kind)
				assert.Equal(t, "before-hook-creation,hook-succeeded", md.Annotations["helm.sh/hook-delete-policy"], kind)
			}
		}

		var pod corev1.Pod
		require.NoError(t, yaml.UnmarshalStrict([]byte(hooks["Pod"]), &pod))
		require.Len(t, pod.Spec.Containers, 1)
		ctr := pod.Spec.Containers[0]
		assert.Equal(t, image, ctr.Image)
		assert.Equal(t, []string{"/usr/local/bin/nrl-k8s"}, ctr.Command, "the image's CLI (fn/tooling/ociimage.CLIBinaryDest); its entrypoint is the KRM function, nrl-krm")
		assert.Equal(t, []string{"status", "exp-1", "-n", want}, ctr.Args)
		assert.Equal(t, "exp-1-status-test", pod.Spec.ServiceAccountName)
		assert.Equal(t, corev1.RestartPolicyNever, pod.Spec.RestartPolicy)
		assert.Equal(t, podsecurity.Restricted, podsecurity.PodNeeds(&pod.ObjectMeta, &pod.Spec), "Pod Security restricted admits it")

		requireStatusReadOnlyRole(t, hooks["Role"])

		var rb rbacv1.RoleBinding
		require.NoError(t, yaml.UnmarshalStrict([]byte(hooks["RoleBinding"]), &rb))
		assert.Equal(t, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "exp-1-status-test"}, rb.RoleRef)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "exp-1-status-test", Namespace: want}}, rb.Subjects)
	}

	hooks, err = helmHooks(t, c, "exp-1", with(map[string]any{"test": map[string]any{"enabled": true, "image": "mirror.example/nrl-k8s@sha256:" + strings.Repeat("ab", 32)}}), "team-a")
	require.NoError(t, err)
	assert.Contains(t, hooks["Pod"], "image: \"mirror.example/nrl-k8s@sha256:"+strings.Repeat("ab", 32)+"\"")
}

// requireStatusReadOnlyRole: the hook's Role grants exactly the reads
// nrl-k8s status makes, on no named object.
func requireStatusReadOnlyRole(t *testing.T, roleYAML string) {
	t.Helper()
	var role rbacv1.Role
	require.NoError(t, yaml.UnmarshalStrict([]byte(roleYAML), &role))
	got := map[string][]string{}
	for _, r := range role.Rules {
		require.Empty(t, r.ResourceNames)
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				got[g+"/"+res] = append(got[g+"/"+res], r.Verbs...)
			}
		}
	}
	// What fn/afterapply/runstatus.Collect reads; tests/afterapply runs status with
	// this Role's token and fails on any refused request.
	assert.Equal(t, map[string][]string{
		"ray.io/rayjobs": {"list"}, "ray.io/rayclusters": {"get", "list"},
		"/pods": {"list"}, "/services": {"list"}, "/configmaps": {"list"}, "/events": {"list"},
		"apps/deployments": {"list"}, "resource.k8s.io/resourceclaims": {"get"},
		"resource.k8s.io/resourceclaimtemplates": {"list"}, "resource.nvidia.com/computedomains": {"list"},
		"kueue.x-k8s.io/workloads": {"list"}, "scheduling.run.ai/podgroups": {"list"},
	}, got)
}

// TestHelmTestHookRealHelm: helm template (Helm 3 and 4) prints the hook
// objects with test.enabled, the same on every run and under both Helms;
// --skip-tests (and the default) print the run alone.
func TestHelmTestHookRealHelm(t *testing.T) {
	clis := helmCLIs(t)
	atRoot(t)
	args := []string{"template", "exp-1", chartDir, "--kube-version", "1.34.0", "-n", "team-a", "--set", "profile=generic-single-node-8gpu", "--set", "user=ann"}
	docs := map[string][]string{}
	for env, bin := range clis {
		out1, errOut, err := helmCmd(t, bin, append(args, "--set", "test.enabled=true")...)
		require.NoError(t, err, errOut)
		out2, _, err := helmCmd(t, bin, append(args, "--set", "test.enabled=true")...)
		require.NoError(t, err)
		assert.Equal(t, out1, out2, "%s: deterministic", env)
		for _, f := range []string{"pod", "role", "rolebinding", "serviceaccount"} {
			assert.Contains(t, out1, "# Source: nemo-rl-run/templates/tests/status-test-"+f+".yaml\n", env)
		}
		docs[env] = hookDocs(out1)
		require.Len(t, docs[env], 4, env)

		skipped, errOut, err := helmCmd(t, bin, append(args, "--set", "test.enabled=true", "--skip-tests")...)
		require.NoError(t, err, errOut)
		plain, errOut, err := helmCmd(t, bin, args...)
		require.NoError(t, err, errOut)
		assert.Equal(t, plain, skipped, "%s: --skip-tests prints the run alone", env)
		assert.NotContains(t, plain, "status-test", env)
	}
	assert.Equal(t, docs["NRL_HELM3"], docs["NRL_HELM4"], "the same hook objects under Helm 3 and 4")
}

// hookDocs are the documents of templates/tests/, without trailing blank
// lines (Helm 4 keeps one before a ---).
func hookDocs(out string) []string {
	var docs []string
	for _, d := range strings.Split(out, "---\n") {
		if strings.Contains(d, "/templates/tests/") {
			docs = append(docs, strings.TrimRight(d, "\n"))
		}
	}
	sort.Strings(docs)
	return docs
}

// TestNewChartTestImage: chart-new --test-image sets the hook's image in
// the team's values.yaml (a mirror of the nrl-k8s image, or a digest).
func TestNewChartTestImage(t *testing.T) {
	atRoot(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	tmp := t.TempDir()
	e := entry(t, "generic-single-node-8gpu")
	idxFile := filepath.Join(tmp, "index.yaml")
	require.NoError(t, os.WriteFile(idxFile, []byte(fmt.Sprintf("profiles:\n- name: team\n  description: d\n  profile: %s\n  recipe: %s\n",
		relTo(t, tmp, filepath.Join(root, e.Profile)), relTo(t, tmp, filepath.Join(root, e.Recipe)))), 0o644))
	idx, err := chartgen.LoadIndex(filepath.ToSlash(idxFile))
	require.NoError(t, err)
	const mirror = "registry.team.example/mirror/nrl-k8s:v0.1.0"
	dir := filepath.Join(tmp, "chart")
	require.NoError(t, chartgen.NewChart(idx, dir, chartgen.ChartMeta{Name: "team-rl", Version: "1.0.0", TestImage: mirror}))
	c := mustLoad(t, dir)
	assert.Equal(t, map[string]any{"enabled": false, "image": mirror}, c.Values["test"])
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(readme), "then `helm test exp-1 -n NAMESPACE --logs`")
	hooks, err := helmHooks(t, c, "exp-1", map[string]any{"profile": "team", "user": "ann", "test": map[string]any{"enabled": true}}, "team-a")
	require.NoError(t, err)
	assert.Contains(t, hooks["Pod"], "image: \""+mirror+"\"")
	assert.Contains(t, hooks["Pod"], "helm.sh/chart: team-rl-1.0.0")

	err = chartgen.NewChart(idx, filepath.Join(tmp, "bad"), chartgen.ChartMeta{Name: "team-rl", Version: "1.0.0", TestImage: "Not An Image"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `test image "Not An Image": expected an image reference`)
}

// TestHelmTestNotes: NOTES name helm test only when the hook is there.
func TestHelmTestNotes(t *testing.T) {
	c := loadChart(t)
	vals := map[string]any{"profile": "generic-single-node-8gpu", "user": "ann"}
	_, notes, err := helmTemplateNamed(c, "exp-1", vals, "team-a")
	require.NoError(t, err)
	assert.NotContains(t, notes, "helm test")
	vals["test"] = map[string]any{"enabled": true}
	_, notes, err = helmTemplateNamed(c, "exp-1", vals, "team-a")
	require.NoError(t, err)
	assert.Contains(t, notes, "  helm test exp-1 -n team-a --logs\n")
}
