package testenv

import (
	"os/exec"
	"testing"
)

// GitCheckout makes dir a git work tree whose every file is tracked, as
// CI's fresh checkout of a pull request is: render-all, diff and
// kustomize-inputs read only tracked files in a work tree
// (source.ConfineRepo). Call GitAdd after adding files.
func GitCheckout(t testing.TB, dir string) {
	t.Helper()
	git(t, dir, "init", "-q")
	GitAdd(t, dir)
}

// GitAdd tracks every file under dir (staged is tracked: git ls-files
// lists the index).
func GitAdd(t testing.TB, dir string) {
	t.Helper()
	git(t, dir, "add", "-A")
}

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "core.autocrlf=false"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}
