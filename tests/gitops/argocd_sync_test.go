package gitops

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argohealth"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/argosync"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// appSpec is the part of an Argo CD Application (or an ApplicationSet's
// template) the run settings live in.
type appSpec struct {
	Metadata struct {
		Finalizers []string `json:"finalizers"`
	} `json:"metadata"`
	Spec struct {
		IgnoreDifferences []struct {
			Group, Kind           string
			ManagedFieldsManagers []string `json:"managedFieldsManagers"`
		} `json:"ignoreDifferences"`
		SyncPolicy struct {
			Automated struct {
				Prune, SelfHeal bool
			} `json:"automated"`
			SyncOptions []string `json:"syncOptions"`
		} `json:"syncPolicy"`
	} `json:"spec"`
}

func readYAML(t *testing.T, file string, into any) {
	t.Helper()
	path := filepath.Join(testenv.RepoRoot(t), argohealth.Dir, file)
	require.NoError(t, yaml.Unmarshal([]byte(testenv.ReadFile(t, path)), into), path)
}

// The shipped Application and the ApplicationSet's template carry the
// settings the Kueue tier proved (TestArgoCDResyncNeverRestarts): they
// ignore exactly the fields of the managers it observed writing into a
// run, apply server-side and only what is out of sync, keep the ignored
// fields at sync, never self-heal, and delete the run's objects with the
// Application.
func TestArgoCDApplicationSettings(t *testing.T) {
	var app appSpec
	var set struct {
		Spec struct {
			Template appSpec `json:"template"`
		} `json:"spec"`
	}
	readYAML(t, "application.yaml", &app)
	readYAML(t, "applicationset.yaml", &set)
	for name, a := range map[string]appSpec{"application.yaml": app, "applicationset.yaml": set.Spec.Template} {
		assert.Contains(t, a.Metadata.Finalizers, "resources-finalizer.argocd.argoproj.io", name)
		kinds := map[string]bool{}
		for _, d := range a.Spec.IgnoreDifferences {
			assert.Equal(t, "ray.io", d.Group, name)
			assert.Equal(t, argosync.ControllerManagers, d.ManagedFieldsManagers, "%s: %s", name, d.Kind)
			kinds[d.Kind] = true
		}
		assert.Equal(t, map[string]bool{"RayJob": true, "RayCluster": true}, kinds, name)
		for _, opt := range []string{"ServerSideApply=true", "ApplyOutOfSyncOnly=true", "RespectIgnoreDifferences=true"} {
			assert.Contains(t, a.Spec.SyncPolicy.SyncOptions, opt, name)
		}
		assert.False(t, a.Spec.SyncPolicy.Automated.SelfHeal, "%s: self-heal re-creates a deleted run", name)
		assert.False(t, a.Spec.SyncPolicy.Automated.Prune, "%s: prune while running", name)
	}
}
