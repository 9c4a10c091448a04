package chartgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The index is read strictly: each profile a DNS label listed once with a
// profile and a recipe (paths relative to the index, kept as written for
// chart-new), and the namespaces it binds the chart to each a namespace
// name listed once.
func TestLoadIndex(t *testing.T) {
	const entry = "- {name: p, description: d, profile: ../prof/./p.yaml, recipe: r.yaml}\n"
	cases := []struct{ name, index, err string }{
		{"profiles and namespaces", "namespaces: [team-a, team-b]\nprofiles:\n" + entry, ""},
		{"an unknown key", "profile:\n" + entry, `: error unmarshaling JSON: while decoding JSON: json: unknown field "profile"; expected profiles: [{name, description, profile, recipe}]`},
		{"a name that is not a DNS label", "profiles:\n" + strings.Replace(entry, "name: p", "name: P_1", 1),
			`: profiles[0].name: found "P_1"; expected a DNS label (it is a chart value and a file name)`},
		{"a name twice", "profiles:\n" + entry + entry, `: profiles[1].name: "p" is listed twice`},
		{"no recipe", "profiles:\n- {name: p, profile: p.yaml}\n", ": profiles[0]: profile and recipe are required"},
		{"no profile listed", "profiles: []\n", ": lists no profile"},
		{"a namespace that is not a name", "namespaces: [team-a, Team_B]\nprofiles:\n" + entry,
			`: namespaces[1]: found "Team_B"; expected a namespace name (a DNS label: lower case letters, digits and '-', at most 63 characters)`},
		{"a namespace too long", "namespaces: [" + strings.Repeat("a", 64) + "]\nprofiles:\n" + entry, `: namespaces[0]: found "aaaa`},
		{"a namespace twice", "namespaces: [team-a, team-a]\nprofiles:\n" + entry, `: namespaces[1]: "team-a" is listed twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.ToSlash(filepath.Join(t.TempDir(), "idx", "index.yaml"))
			require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
			require.NoError(t, os.WriteFile(file, []byte(tc.index), 0o600))
			idx, err := LoadIndex(file)
			if tc.err != "" {
				require.ErrorContains(t, err, file+tc.err)
				return
			}
			require.NoError(t, err)
			dir := filepath.ToSlash(filepath.Dir(file))
			require.Equal(t, dir, idx.Dir)
			require.Equal(t, []string{"team-a", "team-b"}, idx.Namespaces)
			require.Len(t, idx.Profiles, 1)
			e := idx.Profiles[0]
			require.Equal(t, []string{"p", "d", filepath.ToSlash(filepath.Dir(dir)) + "/prof/p.yaml", dir + "/r.yaml", "../prof/p.yaml", "r.yaml"},
				[]string{e.Name, e.Description, e.Profile, e.Recipe, e.InIndex.Profile, e.InIndex.Recipe})
		})
	}
	_, err := LoadIndex(filepath.ToSlash(filepath.Join(t.TempDir(), "none.yaml")))
	require.ErrorContains(t, err, "none.yaml")
}
