package chartgen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// chart-new refuses, before it writes anything, a chart name Helm would
// not take, a directory with files in it, a test image that is no image
// reference, an index path that would tie the chart to this machine, and
// namespaces that are not names listed once.
func TestNewChartRefuses(t *testing.T) {
	entry := Entry{Name: "p", Profile: "p.yaml", Recipe: "r.yaml"}
	entry.InIndex.Profile, entry.InIndex.Recipe = "p.yaml", "r.yaml"
	abs := entry
	abs.InIndex.Recipe = "/abs/r.yaml"
	cases := []struct {
		name  string
		entry Entry
		m     ChartMeta
		full  bool // dir holds a file
		err   string
	}{
		{"a chart name Helm would not take", entry, ChartMeta{Name: "Team_RL", Version: "1.0.0"}, false,
			`chart name "Team_RL": expected lower case letters, digits and '-' (Helm's chart name convention)`},
		{"a directory with files", entry, ChartMeta{Name: "team", Version: "1.0.0"}, true, "exists and is not empty; expected a new directory"},
		{"a test image that is no image", entry, ChartMeta{Name: "team", Version: "1.0.0", TestImage: "not an image"}, false,
			`test image "not an image": expected an image reference (name:tag or name@sha256:digest)`},
		{"an absolute path in the index", abs, ChartMeta{Name: "team", Version: "1.0.0"}, false,
			`index profiles[0].recipe: "/abs/r.yaml" is absolute; expected a path relative to the index file`},
		{"a namespace that is not a name", entry, ChartMeta{Name: "team", Version: "1.0.0", Namespaces: []string{"ok", "-bad"}}, false,
			`--namespaces[1]: found "-bad"; expected a namespace name`},
		{"a version Helm would not take", entry, ChartMeta{Name: "team", Version: "one"}, false,
			"chart metadata (Chart.yaml): validation: chart.metadata.version \"one\" is invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "chart")
			if tc.full {
				require.NoError(t, os.MkdirAll(dir, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "keep"), nil, 0o600))
			}
			err := NewChart(&Index{Profiles: []Entry{tc.entry}}, dir, tc.m)
			require.ErrorContains(t, err, tc.err)
			entries, _ := os.ReadDir(dir)
			require.Len(t, entries, map[bool]int{true: 1}[tc.full], "nothing written")
		})
	}
}

// Chart.yaml is the embedded one with the team's name and version, its
// description (or one naming the chart), and the home, sources and app
// version it gives, else the embedded ones.
func TestChartMetadata(t *testing.T) {
	files, err := skeletonFiles()
	require.NoError(t, err)
	var embedded chart.Metadata
	require.NoError(t, yaml.Unmarshal(files["Chart.yaml"], &embedded))
	require.NotEmpty(t, embedded.Home)
	cases := []struct {
		name                          string
		m                             ChartMeta
		description, home, appVersion string
		sources                       []string
	}{
		{"the embedded chart's", ChartMeta{Name: "team", Version: "2.0.0"},
			"One NeMo-RL training run on KubeRay per Helm release, for the profiles of team.", embedded.Home, embedded.AppVersion, embedded.Sources},
		{"the team's own", ChartMeta{Name: "team", Version: "2.0.0", Description: "ours", Home: "https://team.example", AppVersion: "9", Sources: []string{"https://src.example"}},
			"ours", "https://team.example", "9", []string{"https://src.example"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			meta, err := chartMetadata(files["Chart.yaml"], tc.m)
			require.NoError(t, err)
			require.Equal(t, []string{"team", "2.0.0", tc.description, tc.home, tc.appVersion},
				[]string{meta.Name, meta.Version, meta.Description, meta.Home, meta.AppVersion})
			require.Equal(t, tc.sources, meta.Sources)
		})
	}
	_, err = chartMetadata([]byte("a: ["), ChartMeta{Name: "team", Version: "1.0.0"})
	require.ErrorContains(t, err, "embedded Chart.yaml: ")
}

// A team chart's README speaks of the team's chart: its name, version,
// first profile, its namespaces and home when it has them (the test sets
// the home), and the generated profile table's markers.
func TestTeamReadme(t *testing.T) {
	files, err := skeletonFiles()
	require.NoError(t, err)
	for _, tc := range []struct {
		name       string
		m          ChartMeta
		namespaces []string
		has, not   []string
	}{
		{"unbound, no home", ChartMeta{Name: "team", Version: "2.0.0", Description: "Ours."}, nil,
			[]string{"# team\n\nOurs.\n", "oci://REGISTRY/team --version 2.0.0", "--set profile=p1 --set user=YOU", readmeBegin + "\n" + readmeEnd + "\n"},
			[]string{"bound to the namespace", "Home: "}},
		{"bound, with a home", ChartMeta{Name: "team", Version: "2.0.0", Home: "https://team.example"}, []string{"a"},
			[]string{"bound to the namespace(s) `a`:", "Home: https://team.example\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta, err := chartMetadata(files["Chart.yaml"], tc.m)
			require.NoError(t, err)
			meta.Home = tc.m.Home
			readme := string(teamReadme(meta, "p1", tc.namespaces))
			for _, s := range tc.has {
				require.Contains(t, readme, s)
			}
			for _, s := range tc.not {
				require.NotContains(t, readme, s)
			}
		})
	}
}
