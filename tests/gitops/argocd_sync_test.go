package gitops

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
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
				AllowEmpty      bool `json:"allowEmpty"`
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
// fields at sync, never self-heal, prune what Git no longer renders (a
// stopped Kueue run's RayJob; each Application holds one run), all of it
// when nothing is left (a removed run; a stopped run MultiKueue dispatches,
// on the manager), and delete the run's objects with the Application. The
// workers' ApplicationSet has the same settings.
func TestArgoCDApplicationSettings(t *testing.T) {
	var app appSpec
	var set, workers struct {
		Spec struct {
			Template appSpec `json:"template"`
		} `json:"spec"`
	}
	readYAML(t, "application.yaml", &app)
	readYAML(t, "applicationset.yaml", &set)
	readYAML(t, "applicationset-workers.yaml", &workers)
	for name, a := range map[string]appSpec{"application.yaml": app, "applicationset.yaml": set.Spec.Template, "applicationset-workers.yaml": workers.Spec.Template} {
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
		assert.True(t, a.Spec.SyncPolicy.Automated.Prune, "%s: a stopped Kueue run's RayJob is deleted by pruning", name)
		assert.True(t, a.Spec.SyncPolicy.Automated.AllowEmpty, "%s: a run with no object left here is pruned whole", name)
	}
}

// argoSet is what tests read of an ApplicationSet: its generators and
// where its template syncs from and to.
type argoSet struct {
	Spec struct {
		Generators []struct {
			Git    *gitGen `json:"git"`
			Matrix *struct {
				Generators []struct {
					Git      *gitGen `json:"git"`
					Clusters *struct {
						Selector struct {
							MatchLabels map[string]string `json:"matchLabels"`
						} `json:"selector"`
					} `json:"clusters"`
				} `json:"generators"`
			} `json:"matrix"`
		} `json:"generators"`
		Template struct {
			Metadata struct{ Name string } `json:"metadata"`
			Spec     struct {
				Destination struct{ Server, Namespace string } `json:"destination"`
				Source      struct {
					RepoURL   string `json:"repoURL"`
					Path      string
					Directory struct{ Include string }
				} `json:"source"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

type gitGen struct {
	RepoURL     string `json:"repoURL"`
	Revision    string
	Directories []struct{ Path string }
}

// The workers' ApplicationSet gives every run folder an Application on
// each Argo CD cluster labelled a MultiKueue worker (a matrix of the git
// directories and clusters generators), syncing the run's worker bundle
// where render-all writes it, from the repository and run folders the
// manager's ApplicationSet reads.
func TestArgoCDWorkerApplicationSet(t *testing.T) {
	var mgr, w argoSet
	readYAML(t, "applicationset.yaml", &mgr)
	readYAML(t, "applicationset-workers.yaml", &w)
	require.Len(t, mgr.Spec.Generators, 1)
	require.Len(t, w.Spec.Generators, 1)
	m := w.Spec.Generators[0].Matrix
	require.NotNil(t, m, "a matrix generator")
	require.Len(t, m.Generators, 2)
	require.NotNil(t, m.Generators[0].Git)
	assert.Equal(t, mgr.Spec.Generators[0].Git, m.Generators[0].Git, "the manager's run folders")
	require.NotNil(t, m.Generators[1].Clusters)
	assert.Equal(t, map[string]string{"nemo-rl.nvidia.com/multikueue-worker": "true"}, m.Generators[1].Clusters.Selector.MatchLabels)

	ws, ms := w.Spec.Template, mgr.Spec.Template
	assert.Equal(t, "{{.server}}", ws.Spec.Destination.Server, "each worker cluster")
	assert.Equal(t, ms.Spec.Destination.Namespace, ws.Spec.Destination.Namespace)
	assert.Equal(t, ms.Spec.Source.RepoURL, ws.Spec.Source.RepoURL)
	assert.Equal(t, renderall.ManifestsDir, ms.Spec.Source.Path)
	assert.Equal(t, renderall.ManifestsDir+"/"+renderall.WorkersDir, ws.Spec.Source.Path, "render-all's worker bundles")
	assert.Equal(t, ms.Spec.Source.Directory, ws.Spec.Source.Directory, "the run's own file")
	assert.Equal(t, "{{.path.basename}}.yaml", ws.Spec.Source.Directory.Include)
	assert.Contains(t, ws.Metadata.Name, "{{.path.basename}}")
	assert.Contains(t, ws.Metadata.Name, "{{.nameNormalized}}", "one Application per run and worker")
}

// The shipped Flux objects (gitops/flux) carry the settings docs/gitops.md
// argues for: the run's own Kustomization prunes what Git no longer
// renders (a stopped Kueue run's RayJob, a run whose folder lists
// nothing), never force-recreates an object, orphans the run's objects
// when it is deleted, and checks the run's RayJob's health; the
// HelmRelease takes its chart from its own OCIRepository pinned to one
// version, never retries or rolls back a run's install or upgrade, keeps
// drift detection off and declares the run's state.
func TestFluxSettings(t *testing.T) {
	root := filepath.Join(testenv.RepoRoot(t), "gitops", "flux")
	var ks struct {
		APIVersion, Kind string
		Metadata         struct{ Name string }
		Spec             struct {
			Path           string
			Prune          bool
			Force          *bool
			Wait           *bool
			DeletionPolicy string                                    `json:"deletionPolicy"`
			HealthChecks   []struct{ APIVersion, Kind, Name string } `json:"healthChecks"`
		}
	}
	require.NoError(t, yaml.Unmarshal([]byte(testenv.ReadFile(t, filepath.Join(root, "kustomization.yaml"))), &ks))
	assert.Equal(t, "kustomize.toolkit.fluxcd.io/v1", ks.APIVersion)
	assert.Equal(t, "Kustomization", ks.Kind)
	assert.True(t, ks.Spec.Prune, "a stopped Kueue run's RayJob is deleted by pruning")
	require.NotNil(t, ks.Spec.Force)
	assert.False(t, *ks.Spec.Force, "force re-creates a RayJob whose apply fails: a new run from step 0")
	require.NotNil(t, ks.Spec.Wait)
	assert.False(t, *ks.Spec.Wait)
	assert.Equal(t, "Orphan", ks.Spec.DeletionPolicy, "deleting a run's Kustomization must not delete the running run")
	assert.Equal(t, "./flux/"+ks.Metadata.Name, ks.Spec.Path, "the run's own folder")
	require.Len(t, ks.Spec.HealthChecks, 1, "the run's RayJob")
	assert.Equal(t, ks.Metadata.Name, ks.Spec.HealthChecks[0].Name)
	assert.Equal(t, "RayJob", ks.Spec.HealthChecks[0].Kind)

	type object struct {
		APIVersion, Kind string
		Metadata         struct{ Name string }
	}
	var repo struct {
		object
		Spec struct {
			URL string
			Ref map[string]string
		}
	}
	var hr struct {
		object
		Spec struct {
			ChartRef struct{ Kind, Name string } `json:"chartRef"`
			Values   map[string]any
			Install  struct {
				Remediation struct{ Retries *int }
			}
			Upgrade struct {
				Remediation struct {
					Retries  *int
					Strategy string
				}
			}
			DriftDetection struct{ Mode string } `json:"driftDetection"`
		}
	}
	docs := strings.Split(testenv.ReadFile(t, filepath.Join(root, "helmrelease.yaml")), "\n---\n")
	require.Len(t, docs, 2, "the run's OCIRepository and HelmRelease")
	require.NoError(t, yaml.Unmarshal([]byte(docs[0]), &repo))
	require.NoError(t, yaml.Unmarshal([]byte(docs[1]), &hr))
	assert.Equal(t, "source.toolkit.fluxcd.io/v1", repo.APIVersion)
	assert.Equal(t, "OCIRepository", repo.Kind)
	assert.Equal(t, []string{"tag"}, slices.Collect(maps.Keys(repo.Spec.Ref)), "one fixed version (tag or digest), never a semver range")
	assert.Equal(t, "helm.toolkit.fluxcd.io/v2", hr.APIVersion)
	assert.Equal(t, "HelmRelease", hr.Kind)
	assert.Equal(t, "OCIRepository", hr.Spec.ChartRef.Kind)
	assert.Equal(t, repo.Metadata.Name, hr.Spec.ChartRef.Name, "the run's own OCIRepository: a shared one upgrades every run at once")
	assert.Equal(t, hr.Metadata.Name+"-chart", repo.Metadata.Name)
	require.NotNil(t, hr.Spec.Install.Remediation.Retries)
	assert.Zero(t, *hr.Spec.Install.Remediation.Retries, "a retried install is a second run")
	require.NotNil(t, hr.Spec.Upgrade.Remediation.Retries)
	assert.Zero(t, *hr.Spec.Upgrade.Remediation.Retries)
	assert.NotEqual(t, "rollback", hr.Spec.Upgrade.Remediation.Strategy)
	assert.Equal(t, "disabled", hr.Spec.DriftDetection.Mode, "KubeRay and Kueue write into a run's objects")
	assert.Contains(t, []any{"run", "stopped"}, hr.Spec.Values["state"], "the run's declared state")
}
