package entrypoint

import "github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"

// The text-level forms the tests read best: each reads its text afresh,
// which the render path never does (it takes the Script the resolve stage
// read once).

// FindInvocation is the first driver call of entrypoint.
func FindInvocation(entrypoint string) (Invocation, bool) { return Parse(entrypoint).First() }

// FindInvocations is every driver call of entrypoint.
func FindInvocations(entrypoint string) []Invocation { return Parse(entrypoint).Calls }

// AppendOverrides parses extra as the pipeline does, then appends them.
func AppendOverrides(entrypoint string, extra []string) (string, error) {
	parsed, err := parseOverrides(extra)
	if err != nil {
		return "", err
	}
	return Parse(entrypoint).AppendOverrides(parsed)
}

// RewriteConfig is Script.RewriteConfig of entrypoint.
func RewriteConfig(entrypoint, path string) (string, []ConfigRewrite, error) {
	return Parse(entrypoint).RewriteConfig(path)
}

func parseOverrides(raw []string) ([]hydra.Override, error) {
	out := make([]hydra.Override, len(raw))
	for i, r := range raw {
		o, err := hydra.Parse(r)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}
