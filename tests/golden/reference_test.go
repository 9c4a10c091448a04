package golden_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/runrequest"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// docsOf splits a YAML stream into documents keyed by "Kind/name".
// sigs.k8s.io/yaml expands the anchors (&id001) that leak into nrl-k8s output.
func docsOf(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, part := range bytes.Split(data, []byte("\n---\n")) {
		part = bytes.TrimPrefix(bytes.TrimSpace(part), []byte("---\n"))
		if len(bytes.TrimSpace(part)) == 0 {
			continue
		}
		var m map[string]any
		require.NoError(t, yaml.Unmarshal(part, &m))
		md := m["metadata"].(map[string]any)
		out[fmt.Sprintf("%s/%s", m["kind"], md["name"])] = m
	}
	return out
}

// diffs lists the paths where a and b differ in meaning (maps compared key
// by key, lists element by element, scalars by value).
func diffs(path string, a, b any) []string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return []string{path + ": mapping vs " + fmt.Sprint(b)}
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		var names []string
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		var out []string
		for _, k := range names {
			out = append(out, diffs(path+"."+k, av[k], bv[k])...)
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return []string{fmt.Sprintf("%s: list of %d vs %v", path, len(av), b)}
		}
		var out []string
		for i := range av {
			out = append(out, diffs(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		return []string{fmt.Sprintf("%s: %v vs %v", path, a, b)}
	}
	return nil
}

// Our render means what nrl-k8s renders for its three GB300 examples. The
// only differences allowed are documented (docs/deviations.md):
//   - rayjob mode also renders the DRA objects and the deployments, which
//     nrl-k8s creates imperatively at apply time;
//   - raycluster mode also renders the training RayJob submitted to the
//     cluster (clusterSelector), which nrl-k8s submits through the Ray SDK.
//
// Anchors, key order and document order differ by design and are ignored.
//
// The comparison renders each case without a run name (a case's
// metadata.name would name the run's objects, docs/deviations.md), and
// leaves out the identity labels nrl-k8s does not set (identityLabels).
func TestMeaningMatchesNrlK8sReference(t *testing.T) {
	ref := testenv.Reference(t)
	for _, name := range []string{"qwen3_30b_math_4n_4gpu", "ultra_48n_pipeclean", "ultra_64n_pipeclean"} {
		dir := map[string]string{
			"qwen3_30b_math_4n_4gpu": "qwen3-30b-math-gb300",
			"ultra_48n_pipeclean":    "ultra-48n-gb300",
			"ultra_64n_pipeclean":    "ultra-64n-gb300",
		}[name]
		for _, tc := range []struct {
			mode    runparams.Mode
			refFile string
			extra   func(key string) bool // objects we add on purpose
		}{
			{runparams.RayJob, name + ".rayjob-dryrun.yaml", func(k string) bool {
				return !strings.HasPrefix(k, "RayJob/")
			}},
			{runparams.RayCluster, name + ".manifests.yaml", func(k string) bool {
				return strings.HasPrefix(k, "RayJob/") && strings.HasSuffix(k, "-train")
			}},
		} {
			t.Run(name+"/"+string(tc.mode), func(t *testing.T) {
				want, err := os.ReadFile(filepath.Join(ref, tc.refFile))
				require.NoError(t, err)
				want = dedupRole(want)
				got := renderUnnamed(t, dir, tc.mode)
				refDocs, ourDocs := docsOf(t, want), docsOf(t, got)
				for _, d := range ourDocs {
					dropIdentityLabels(d)
				}
				for _, d := range refDocs {
					dropIdentityLabels(d)
				}
				for k := range ourDocs {
					if _, inRef := refDocs[k]; !inRef {
						require.True(t, tc.extra(k), "object %s is not in the reference and not a documented addition", k)
					}
				}
				for k, rd := range refDocs {
					od, ok := ourDocs[k]
					require.True(t, ok, "reference object %s is missing from our render", k)
					require.Empty(t, diffs(k, rd, od), "differences in meaning for %s", k)
				}
			})
		}
	}
}

// dedupRole applies the one documented rename (docs/deviations.md): nrl-k8s
// appends the role to a cluster name that ends in it already
// (compute-domain-<user>-ultra-pipeclean-training-training); we do not.
func dedupRole(ref []byte) []byte {
	return bytes.ReplaceAll(ref, []byte("-ultra-pipeclean-training-training"), []byte("-ultra-pipeclean-training"))
}

// identityLabels are the run identity labels we add to every object and pod
// template (fn/build/labels.go). nrl-k8s sets none but the owner, and that
// only where a profile's labels say so; they are left out on both sides
// (the golden files pin them).
var identityLabels = []string{vocab.InstanceLabel, vocab.PartOfLabel, vocab.OwnerLabel}

// dropIdentityLabels removes identityLabels from every labels mapping of a
// document, and a labels mapping left empty.
func dropIdentityLabels(v any) {
	switch t := v.(type) {
	case map[string]any:
		if ls, ok := t["labels"].(map[string]any); ok {
			for _, k := range identityLabels {
				delete(ls, k)
			}
			if len(ls) == 0 {
				delete(t, "labels")
			}
		}
		for _, c := range t {
			dropIdentityLabels(c)
		}
	case []any:
		for _, c := range t {
			dropIdentityLabels(c)
		}
	}
}

// renderUnnamed renders a golden case as nrl-k8s would, without a run name.
func renderUnnamed(t *testing.T, dir string, mode runparams.Mode) []byte {
	t.Helper()
	var c Case
	for _, k := range cases(t) {
		if k.Dir == dir {
			c = k
		}
	}
	require.NotNil(t, c.Run, dir)
	req := runrequest.Of(c.Run, filepath.ToSlash(c.Input("run.yaml")))
	req.Mode, req.Name = mode, ""
	return fixtures.Stream(t, req)
}
