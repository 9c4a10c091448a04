// Package docs checks that the repository's documentation stands on its own
// and stays true to the tree: no page sends a reader to files outside the
// checkout or to an in-repo path that does not exist, every package says
// what it is for, and docs/architecture.md's package layout lists every
// package.
package docs_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// outside are names of things that exist only beside the repository (the
// workspace it was developed in), never in a clone.
var outside = []string{
	"../shared",
	"shared/nemo-rl-examples",
	"nemo-rl-examples",
	"NRL_K8S_BEHAVIOUR.md",
	"SPEC.md",
	"STYLE.md",
}

// pages are README.md and docs/*.md, plus every other Markdown file we
// write (READMEs of the chart, profiles, examples, vendored data). The
// upstream files under recipes/examples are NeMo-RL's, not ours.
func pages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "recipes/examples" || rel == "bin" || rel == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".md") {
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

func TestDocsStayInsideTheRepository(t *testing.T) {
	root := testenv.RepoRoot(t)
	files := pages(t, root)
	require.Contains(t, files, "README.md")
	require.Contains(t, files, "docs/nrl-k8s.md")
	require.Contains(t, files, "docs/deviations.md")
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			for _, name := range outside {
				if strings.Contains(line, name) {
					t.Errorf("%s:%d: names %q, which is not in the repository; bring what the reader needs into the repository (e.g. docs/nrl-k8s.md) instead", f, i+1, name)
				}
			}
		}
	}
}

// TestDocsInstallFromACheckout: our module is not published to a module
// proxy, so `go install github.com/nemo-rl-krm/...@latest` fails for every
// reader; the docs build the binary from a checkout instead.
func TestDocsInstallFromACheckout(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, p := range pages(t, root) {
		b, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "go install") && strings.Contains(line, "nemo-rl-krm/nemo-rl-krm") {
				t.Errorf("%s:%d: %q: the module is not published; expected a build from a checkout (make build)", p, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// repoPath is a path into the checkout's code and tooling, where files
// move: it starts at one of those top-level folders. (examples/, profiles/
// and recipes/ also spell a user's runs repository and NeMo-RL's tree in
// the pod, so only links are checked there.) Text such a path cannot hold
// (placeholders, globs, shell) ends the match.
var repoPath = regexp.MustCompile(`(?:^|[\s(\x60"'\[])((?:\.ci|charts|docs|fn|gitops|hack|internal|kustomize|tests)/[A-Za-z0-9_./-]*)`)

// goSelector is a Go identifier written after a package path
// (fn/support/parallel.Map).
var goSelector = regexp.MustCompile(`\.[A-Z][A-Za-z0-9]*$`)

// mdLink is a Markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsPathsExist: every in-repo path a page names exists, so a moved or
// renamed file cannot leave a page pointing at nothing. A path is read from
// the repository root; a Markdown link (and a path in a page below the
// root) may also be relative to the page's folder.
func TestDocsPathsExist(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, f := range pages(t, root) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			for _, p := range cited(line) {
				if !exists(root, path.Dir(f), p) {
					t.Errorf("%s:%d: names %s, which does not exist in the repository; point it at the file's current path", f, i+1, p)
				}
			}
		}
	}
}

// cited lists the in-repo paths a line names.
func cited(line string) []string {
	var out []string
	for _, m := range repoPath.FindAllStringSubmatch(line, -1) {
		p := strings.TrimSuffix(strings.TrimRight(m[1], ".,:;"), "/...")
		out = append(out, goSelector.ReplaceAllString(p, ""))
	}
	for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		out = append(out, target)
	}
	return out
}

func exists(root, pageDir, p string) bool {
	for _, base := range []string{root, filepath.Join(root, filepath.FromSlash(pageDir))} {
		if _, err := os.Stat(filepath.Join(base, filepath.FromSlash(p))); err == nil {
			return true
		}
	}
	return false
}

// The check can fail: a moved file, a link to a missing page, a path in
// backquotes or prose are each caught; placeholders and URLs are not paths.
func TestCited(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"see `fn/engine/resolve/podconfig/podconfig_test.go` (`TestX`)", []string{"fn/engine/resolve/podconfig/podconfig_test.go"}},
		{"run `go test ./fn/...` or tests/golden/... or `fn/support/parallel.Map`.", []string{"tests/golden/", "fn/support/parallel"}},
		{"[run identity](run-identity.md#labels), [k](https://kubernetes.io/x)", []string{"run-identity.md"}},
		{"github.com/nemo-rl-krm/nemo-rl-krm/fn/cmd/nrl-k8s", nil},
		{"a profile under profiles/gb300/, then docs/krm.md:", []string{"docs/krm.md"}},
		{"files/rendered/<profile>.json", nil},
	} {
		require.Equal(t, tc.want, cited(tc.line), tc.line)
	}
	root := testenv.RepoRoot(t)
	require.True(t, exists(root, "docs", "run-identity.md"))
	require.True(t, exists(root, "docs", "fn/support/diag"))
	require.False(t, exists(root, "docs", "fn/engine/podconfig/podconfig_test.go"))
}

// packages lists the module's packages below fn/, internal/ and hack/ with
// their package comments.
func packages(t *testing.T, root string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Doc}}", "./fn/...", "./internal/...", "./hack/...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	pkgs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, doc, _ := strings.Cut(line, "\t")
		pkgs[strings.TrimPrefix(path, "github.com/nemo-rl-krm/nemo-rl-krm/")] = doc
	}
	require.Greater(t, len(pkgs), 40, "go list printed too few packages")
	return pkgs
}

// TestEveryPackageSaysWhatItIs: `go doc` of any package starts with what it
// is for (a doc.go or the main file's package comment).
func TestEveryPackageSaysWhatItIs(t *testing.T) {
	for path, doc := range packages(t, testenv.RepoRoot(t)) {
		if doc == "" {
			t.Errorf("%s has no package comment; say what it is for above its package clause (a doc.go when no file is the obvious home)", path)
		}
	}
}

// layoutRow is a row of docs/architecture.md's "Package layout" table: a
// group folder (or one package's folder) and the packages it lists.
var layoutRow = regexp.MustCompile("^\\| `((?:fn|internal)/[a-z/]*)` \\| ([^|]+) \\|")

// TestArchitectureListsEveryPackage: the package layout table names every
// package below fn/ and internal/, and nothing that is not one, so the
// overview a reader starts from is the tree.
func TestArchitectureListsEveryPackage(t *testing.T) {
	root := testenv.RepoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		m := layoutRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, name := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(m[2], -1) {
			p := m[1]
			if strings.HasSuffix(p, "/") {
				p += name[1]
			}
			listed[p] = true
		}
	}
	pkgs := packages(t, root)
	for p := range pkgs {
		if strings.HasPrefix(p, "hack/") {
			continue
		}
		if !listed[p] {
			t.Errorf("%s is not in docs/architecture.md's package layout table: add it to its group's row", p)
		}
	}
	for p := range listed {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("docs/architecture.md's package layout table lists %s, which is not a package", p)
		}
	}
}

// TestReadmeListsEveryPage: README's layout names every page under docs/,
// and no page that is not there.
func TestReadmeListsEveryPage(t *testing.T) {
	root := testenv.RepoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	var row string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `docs/` |") {
			row = line
		}
	}
	require.NotEmpty(t, row, "README.md has no `docs/` row in its layout table")
	var listed []string
	for _, m := range regexp.MustCompile("`([a-z0-9-]+\\.md)`").FindAllStringSubmatch(row, -1) {
		listed = append(listed, m[1])
	}
	onDisk, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	for i, p := range onDisk {
		onDisk[i] = filepath.Base(p)
	}
	require.ElementsMatch(t, onDisk, listed, "README.md's `docs/` row and the pages under docs/")
}

// pinned reads one version from a file of the repository: the first
// submatch of re.
func pinned(t *testing.T, root, file, re string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	require.NoError(t, err)
	m := regexp.MustCompile(re).FindSubmatch(b)
	require.NotNil(t, m, "%s: no match for %s", file, re)
	return string(m[1])
}

// TestDocsVersionsArePins: a version the pages give for a pinned tool or
// library is the one the repository pins, so a bump cannot leave a page
// naming the old one.
func TestDocsVersionsArePins(t *testing.T) {
	root := testenv.RepoRoot(t)
	pins := map[string]string{
		"KubeRay":        pinned(t, root, "go.mod", `ray-project/kuberay/ray-operator v(\S+)`),
		"Go":             pinned(t, root, "go.mod", `(?m)^go (\S+)`),
		"Kueue":          pinned(t, root, "hack/kueue/go.mod", `sigs.k8s.io/kueue v(\S+)`),
		"kube-apiserver": pinned(t, root, "hack/apiserver/go.mod", `k8s.io/kubernetes v(\S+)`),
		"Helm 3":         pinned(t, root, "go.mod", `helm.sh/helm/v3 v(\S+)`),
		"Helm 4":         pinned(t, root, "hack/tools.sh", `"helm v(4\S+) `),
		"kustomize":      pinned(t, root, "hack/tools.sh", `"kustomize v(\S+) `),
		"golangci-lint":  pinned(t, root, "hack/tools.sh", `"golangci-lint v(\S+) `),
	}
	mention := regexp.MustCompile(`\b(KubeRay|Go|Kueue|kube-apiserver|Helm|kustomize|golangci-lint) v?(\d+\.\d+\.\d+)\b`)
	for _, f := range pages(t, root) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range mention.FindAllStringSubmatch(line, -1) {
				name, version := m[1], m[2]
				if name == "Helm" {
					name += " " + version[:1]
				}
				if want, ok := pins[name]; ok && version != want {
					t.Errorf("%s:%d: %s %s, but the repository pins %s", f, i+1, m[1], version, want)
				}
			}
		}
	}
}

// notOurs are test-like names the pages cite from elsewhere.
var notOurs = map[string]string{
	"TestSuccess":                 "Flux's HelmRelease condition",
	"TestRewriteEntrypointRecipe": "nrl-k8s's Python test class",
}

// TestDocsTestNamesExist: a test, fuzz target or benchmark a page cites as
// evidence is defined in the module (a name followed by * is a family).
func TestDocsTestNamesExist(t *testing.T) {
	root := testenv.RepoRoot(t)
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)\(`)
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			defined[string(m[1])] = true
		}
		return nil
	}))
	require.True(t, defined["TestDocsTestNamesExist"], "the walk found no test declarations")
	cite := regexp.MustCompile(`\b((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)(\*?)`)
	for _, f := range pages(t, root) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range cite.FindAllStringSubmatch(line, -1) {
				if m[2] == "*" || defined[m[1]] || notOurs[m[1]] != "" {
					continue
				}
				t.Errorf("%s:%d: cites %s, which no test file defines; point it at the test's current name", f, i+1, m[1])
			}
		}
	}
}

// maxWords is what README.md and docs/*.md may hold together: each fact said
// once, on the page a user looks for it on; a new fact pays for itself by
// cutting a repeated or stale one.
const maxWords = 40000

func TestDocsStayWithinTheirWordBudget(t *testing.T) {
	root := testenv.RepoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append(files, filepath.Join(root, "README.md"))
	words := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		words += len(strings.Fields(string(b)))
	}
	require.Greater(t, words, 1000, "the word count read the pages")
	require.LessOrEqual(t, words, maxWords, "README.md and docs/*.md: %d words, at most %d", words, maxWords)
}
