package cli

import (
	"os"
	"path/filepath"
)

// gitRoot is the work tree holding dir (the nearest directory upwards with
// a .git directory or, for worktrees and submodules, a .git file), or ""
// outside one. `render-all --check` names files relative to it, so
// `git apply` of its diff works from the repository root, the directory CI
// and reviewers run it in, whatever DIR is.
func gitRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
