package podconfig

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
)

func TestOf(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := []struct {
		name       string
		recipe     string
		root       string // --recipe-root
		launch     profile.Launch
		wantTarget string
		wantErr    string
		wantWarn   string
	}{
		{
			name:       "mapped and rewritten, relative to codePath",
			recipe:     "recipes/examples/configs/recipes/llm/a.yaml",
			launch:     profile.Launch{CodeSource: "image", CodePath: str("/opt/nemo-rl"), Entrypoint: str("python run_grpo.py --config examples/configs/b.yaml")},
			wantTarget: "examples/configs/recipes/llm/a.yaml", wantWarn: "rewritten to --config examples/configs/recipes/llm/a.yaml",
		},
		{
			name:       "already the checked recipe",
			recipe:     "../recipes/examples/configs/a.yaml",
			launch:     profile.Launch{CodeSource: "lustre", CodePath: str("/lustre/nemo-rl"), Entrypoint: str("python run_grpo.py --config examples/configs/a.yaml")},
			wantTarget: "examples/configs/a.yaml",
		},
		{
			name:       "absolute --config stays absolute",
			recipe:     "recipes/examples/configs/a.yaml",
			launch:     profile.Launch{CodeSource: "image", CodePath: str("/opt/nemo-rl"), Entrypoint: str("python run_grpo.py --config /opt/nemo-rl/examples/configs/b.yaml")},
			wantTarget: "/opt/nemo-rl/examples/configs/a.yaml", wantWarn: "rewritten",
		},
		{
			name:   "recipeRoot outside codePath",
			recipe: "r/x/a.yaml", root: "r",
			launch:     profile.Launch{CodeSource: "image", CodePath: str("/opt/nemo-rl"), RecipeRoot: str("/mnt/recipes"), Entrypoint: str("python run_grpo.py --config b.yaml")},
			wantTarget: "/mnt/recipes/x/a.yaml", wantWarn: "rewritten",
		},
		{
			name:   "recipe outside --recipe-root",
			recipe: "elsewhere/a.yaml", root: "recipes",
			launch:  profile.Launch{CodeSource: "image", CodePath: str("/opt/nemo-rl"), Entrypoint: str("python run_grpo.py --config b.yaml")},
			wantErr: "is not under the recipe root recipes",
		},
		{
			name:   "no recipe root, names agree",
			recipe: "tests/x/r.yaml",
			launch: profile.Launch{CodeSource: "image", CodePath: str("/opt/nemo-rl"), Entrypoint: str("python run_grpo.py --config r.yaml")},
		},
		{
			name:    "no recipe root, another recipe",
			recipe:  "recipes/recipes/llm/a.yaml",
			launch:  profile.Launch{CodeSource: "image", CodePath: str("/opt/nemo-rl"), Entrypoint: str("python run_grpo.py --config examples/configs/recipes/llm/b.yaml")},
			wantErr: "the pod reads --config examples/configs/recipes/llm/b.yaml but the checked recipe is recipes/recipes/llm/a.yaml",
		},
		{
			name:     "upload says what the pod reads",
			recipe:   "recipes/examples/configs/a.yaml",
			launch:   profile.Launch{CodeSource: "upload", Entrypoint: str("python run_grpo.py --config examples/configs/b.yaml")},
			wantWarn: "the pod reads --config examples/configs/b.yaml from the image's code",
		},
		{
			name:    "no --config",
			recipe:  "recipes/examples/configs/a.yaml",
			launch:  profile.Launch{CodeSource: "image", CodePath: str("/opt/nemo-rl"), Entrypoint: str("python run_grpo.py x=1")},
			wantErr: "line 1: the driver call has no --config: the pod would train the driver's default config",
		},
		{
			name:       "configMap",
			recipe:     "anywhere/a.yaml",
			launch:     profile.Launch{CodeSource: "image", CodePath: str("/opt/nemo-rl"), RecipeSource: "configMap", Entrypoint: str("python run_grpo.py --config b.yaml")},
			wantTarget: "/etc/nemo-rl/recipe/recipe.yaml",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prof := &profile.Loaded{File: "p.yaml", Infra: &profile.Infra{Launch: tc.launch}}
			target, ds := Of(Input{Profile: prof, RecipeFile: tc.recipe, RecipeRoot: tc.root, Entrypoint: script(prof)})
			var errs, warns []string
			for _, d := range ds {
				switch d.Severity {
				case "error":
					errs = append(errs, d.Message)
				case "warning":
					warns = append(warns, d.Message)
				}
			}
			if tc.wantErr != "" {
				require.Len(t, errs, 1)
				require.Contains(t, errs[0], tc.wantErr)
				return
			}
			require.Empty(t, errs)
			require.Equal(t, tc.wantTarget, target)
			if tc.wantWarn == "" {
				require.Empty(t, warns)
			} else {
				require.Contains(t, strings.Join(warns, "\n"), tc.wantWarn)
			}
		})
	}
}

// script is the profile's entrypoint as the resolve stage reads it.
func script(prof *profile.Loaded) *entrypoint.Script {
	if prof.Infra.Launch.Entrypoint == nil {
		return nil
	}
	s := entrypoint.Parse(*prof.Infra.Launch.Entrypoint)
	return &s
}
