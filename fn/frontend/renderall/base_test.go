package renderall

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// baseRepo is a git repository whose runs repository is lab/: main holds
// run a (with a worker bundle) and an allow-list, then a branch pr rewrites
// both and the work tree rewrites them again, uncommitted.
func baseRepo(t *testing.T) (root string, git func(...string)) {
	t.Helper()
	root = t.TempDir()
	git = func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(root, "lab", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	git("init", "-q", "-b", "main")
	write("manifests/a.yaml", "kind: A\n")
	write("manifests/workers/a.yaml", "kind: W\n")
	write("manifests/notes.txt", "not a manifest\n")
	write("manifests/"+KustomizationFile, "resources: [a.yaml]\n")
	write(AllowFile, allowHead+"default: {namespaces: [team]}\n")
	require.NoError(t, os.Symlink("a.yaml", filepath.Join(root, "lab", "manifests", "link.yaml")))
	git("add", "-A")
	git("commit", "-qm", "base")
	git("checkout", "-q", "-b", "pr")
	write("manifests/a.yaml", "kind: PR\n")
	write(AllowFile, allowHead+"default: {namespaces: [team, kube-system]}\n")
	git("commit", "-qam", "pr")
	write("manifests/a.yaml", "kind: WorkTree\n")
	return root, git
}

// The base is read at the ref's tip, never from the pull request's
// commits or work tree: its manifests (worker bundles joined, symlinks,
// kustomization.yaml and other files skipped) and allow-list; an allow-list that does not parse
// names the file and the ref.
func TestBaseFromRevision(t *testing.T) {
	root, git := baseRepo(t)
	dir := filepath.Join(root, "lab")
	b, err := BaseFromRevision(dir, "main", "GITHUB_BASE_REF=main")
	require.NoError(t, err)
	assert.True(t, b.Known)
	assert.Regexp(t, `^main at [0-9a-f]+ \(the base branch's tip\), from GITHUB_BASE_REF=main$`, b.From)
	assert.Equal(t, map[string][]byte{"a": []byte("kind: A\nkind: W\n")}, b.Manifests)
	assert.Equal(t, allowHead+"default: {namespaces: [team]}\n", string(b.AllowData))
	assert.True(t, b.Allow.PermitsNamespace("a", "team"))
	assert.False(t, b.Allow.PermitsNamespace("a", "kube-system"), "the pull request's allow-list is not obeyed")

	_, err = BaseFromRevision(dir, "no-such-branch", "")
	assert.Error(t, err)

	git("checkout", "-q", "-f", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, AllowFile), []byte("kind: [\n"), 0o644))
	git("commit", "-qam", "a broken allow-list")
	_, err = BaseFromRevision(dir, "main", "")
	assert.ErrorContains(t, err, "lab/review-allow.yaml at main: ")

	git("rm", "-q", filepath.Join("lab", AllowFile))
	git("commit", "-qm", "no allow-list")
	b, err = BaseFromRevision(dir, "main", "")
	require.NoError(t, err)
	assert.Nil(t, b.Allow, "no allow-list allows nothing")
	assert.NotContains(t, b.From, ", from ")
}

// Without a base named, CI's variable names the branch (origin/ first);
// one that names no commit is an error, never a reason to judge the
// change against itself; else the current branch's upstream; else none.
func TestFindBaseRef(t *testing.T) {
	root, git := baseRepo(t)
	dir := filepath.Join(root, "lab")
	cases := []struct {
		name          string
		env           map[string]string
		setup         func()
		ref, why, err string
	}{
		{name: "GitHub's variable", env: map[string]string{"GITHUB_BASE_REF": "main"}, ref: "main", why: "GITHUB_BASE_REF=main"},
		{name: "GitLab's variable", env: map[string]string{"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"}, ref: "main", why: "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main"},
		{name: "no such branch", env: map[string]string{"GITHUB_BASE_REF": "gone"}, err: "GITHUB_BASE_REF=gone, but neither origin/gone nor gone is a commit here"},
		{name: "nothing names a base", ref: "", why: ""},
		{name: "the upstream", setup: func() { git("branch", "-q", "--set-upstream-to", "main") }, ref: "main", why: "the upstream of the current branch"},
		{name: "origin's branch first", env: map[string]string{"GITHUB_BASE_REF": "main"}, setup: func() { git("update-ref", "refs/remotes/origin/main", "main") },
			ref: "origin/main", why: "GITHUB_BASE_REF=main"},
	}
	for _, c := range cases { // in order: a setup holds for the cases after it
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup()
			}
			ref, why, err := FindBaseRef(dir, func(k string) string { return c.env[k] })
			if c.err != "" {
				assert.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.ref, ref)
			assert.Equal(t, c.why, why)
		})
	}
}

// A checkout of the base branch, or, with no base, the checkout itself
// (said so), is read under the repository's disk rules: manifests with
// their worker bundles, and the allow-list when there is one.
func TestBaseFromDirAndUnknown(t *testing.T) {
	root, _ := baseRepo(t)
	dir := filepath.Join(root, "lab")
	b, err := BaseFromDir(dir)
	require.NoError(t, err)
	assert.Equal(t, Base{Known: true, From: dir, Manifests: map[string][]byte{"a": []byte("kind: WorkTree\nkind: W\n")}, Allow: b.Allow,
		AllowData: []byte(allowHead + "default: {namespaces: [team, kube-system]}\n")}, b)
	require.NotNil(t, b.Allow)

	disk, err := source.ConfineRepo(root, false)
	require.NoError(t, err)
	committed := map[string][]byte{"a": []byte("x")}
	u, err := Unknown(disk, dir, committed)
	require.NoError(t, err)
	assert.False(t, u.Known)
	assert.Contains(t, u.From, "no base branch found")
	assert.Equal(t, committed, u.Manifests)
	assert.NotNil(t, u.Allow)

	require.NoError(t, os.Remove(filepath.Join(dir, AllowFile)))
	a, data, err := ReadAllow(disk, dir)
	require.NoError(t, err)
	assert.Nil(t, a)
	assert.Nil(t, data)
	require.NoError(t, os.WriteFile(filepath.Join(dir, AllowFile), []byte(allowHead+"runs: {r: {podSecurity: root}}\n"), 0o644))
	_, _, err = ReadAllow(disk, dir)
	assert.ErrorContains(t, err, "review-allow.yaml: runs.r.podSecurity: \"root\"")
	_, err = BaseFromDir(dir)
	assert.ErrorContains(t, err, "runs.r.podSecurity")
	// A folder that is not there is no base with no runs.
	_, err = BaseFromDir(filepath.Join(root, "no-such"))
	assert.ErrorContains(t, err, "no-such: not a directory; expected a checkout of the base branch's runs repository")
}
