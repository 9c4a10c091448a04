package renderall

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// Base is what render-all --check judges a pull request against: the base
// branch's committed manifests and its allow-list. A pull request rewrites
// its own manifests/ and review-allow.yaml, so neither is read from the
// checkout under review when a base is known.
type Base struct {
	// From says where the base came from, for the gate's first line.
	From string
	// Known is false when no base could be found: the checkout's own
	// committed manifests and allow-list stand in, and the gate says so.
	Known bool
	// Manifests are the runs' committed manifests, each with its worker
	// bundle joined (Join), as Result.Whole holds a render.
	Manifests map[string][]byte
	// Allow is the base's allow-list (nil: none); AllowData its bytes, so
	// a pull request's change to it can be shown.
	Allow     *Allow
	AllowData []byte
	// FluxRuns are the runs with a folder below the base's FluxDir, and
	// FluxBuild reads a file there by its path below FluxDir
	// (<run>/kustomization.yaml; nil, nil: none).
	FluxRuns  []string
	FluxBuild func(file string) ([]byte, error)
}

// BaseEnv names the environment variables CI sets to the branch a pull
// request targets, in the order they are read: GitHub Actions, GitLab CI.
var BaseEnv = []string{"GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"}

// FindBaseRef is the branch a pull request's checkout at dir is judged
// against when no base is given (read at its tip): the branch CI names
// (origin/<branch>, else <branch>), else the branch HEAD's branch tracks.
// "" with the reason when there is none.
func FindBaseRef(dir string, getenv func(string) string) (ref, why string, err error) {
	for _, env := range BaseEnv {
		branch := getenv(env)
		if branch == "" {
			continue
		}
		for _, cand := range []string{"origin/" + branch, branch} {
			if _, err := source.ResolveRevision(dir, cand); err == nil {
				return cand, env + "=" + branch, nil
			}
		}
		// CI said there is a base: not finding it is an error, not a
		// reason to judge the pull request against itself.
		return "", "", fmt.Errorf("%s=%s, but neither origin/%s nor %s is a commit here; fetch it (actions/checkout with fetch-depth: 0) or pass --base-ref", env, branch, branch, branch)
	}
	if up := source.Upstream(dir); up != "" {
		return up, "the upstream of the current branch", nil
	}
	return "", "", nil
}

// BaseFromRevision reads the base from git objects: the manifests and the
// allow-list of the runs repository at dir (a path in the work tree), as
// they are at ref's tip. Never at the merge-base: a pull request forked
// before the base branch tightened its allow-list (or dropped a privilege
// from a run) is judged by the base as it is today, what merging it
// changes.
func BaseFromRevision(dir, ref, why string) (Base, error) {
	rev, err := source.ResolveRevision(dir, ref)
	if err != nil {
		return Base{}, err
	}
	rel, err := rev.Rel(dir)
	if err != nil {
		return Base{}, err
	}
	b := Base{Known: true, Manifests: map[string][]byte{}, From: fmt.Sprintf("%s at %s (the base branch's tip)", ref, rev.Short())}
	if why != "" {
		b.From += ", from " + why
	}
	var budget source.RenderBudget
	mdir := path.Join(rel, ManifestsDir)
	manifests, err := manifestsAt(rev, ref, mdir, &budget)
	if err != nil {
		return Base{}, err
	}
	workers, err := manifestsAt(rev, ref, path.Join(mdir, WorkersDir), &budget)
	if err != nil {
		return Base{}, err
	}
	b.Manifests = JoinAll(manifests, workers)
	if b.FluxRuns, b.FluxBuild, err = fluxRunsAt(rev, rel); err != nil {
		return Base{}, err
	}
	allowName := path.Join(rel, AllowFile)
	data, err := rev.ReadFile(allowName, source.MaxFileSize)
	if err != nil && !errors.Is(err, source.ErrNotFound) {
		return Base{}, err
	}
	if err == nil {
		if b.Allow, err = ParseAllow(allowName+" at "+ref, data); err != nil {
			return Base{}, err
		}
		b.AllowData = data
	}
	return b, nil
}

// manifestsAt reads the *.yaml files of dir at a revision, keyed by run.
func manifestsAt(rev source.Revision, ref, dir string, budget *source.RenderBudget) (map[string][]byte, error) {
	entries, err := rev.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var manifests []source.TreeEntry
	for _, e := range entries {
		if !IsManifestName(e.Name) || !e.Regular {
			continue // a symlink in the base is not a manifest either
		}
		name := path.Join(dir, e.Name)
		if e.Size > source.MaxRenderSize {
			return nil, fmt.Errorf("%s at %s: over the %d-byte limit", name, ref, source.MaxRenderSize)
		}
		if err := budget.Take(name, e.Size); err != nil {
			return nil, err
		}
		manifests = append(manifests, e)
	}
	out := map[string][]byte{}
	if len(manifests) == 0 {
		return out, nil
	}
	blobs, err := rev.ReadBlobs(manifests)
	if err != nil {
		return nil, err
	}
	for name, data := range blobs {
		out[strings.TrimSuffix(name, Ext)] = data
	}
	return out, nil
}

// BaseFromDir reads the base from a checkout of the base branch (the runs
// repository at dir), under the same rules as the repository itself.
func BaseFromDir(dir string) (Base, error) {
	// A missing folder inside a work tree would read as a base with no runs.
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return Base{}, fmt.Errorf("%s: not a directory; expected a checkout of the base branch's runs repository", dir)
	}
	disk, err := source.ConfineRepo(RepoRoot(dir), false)
	if err != nil {
		return Base{}, err
	}
	b := Base{Known: true, From: dir}
	if b.Manifests, _, _, err = ReadManifests(disk, filepath.Join(dir, ManifestsDir)); err != nil {
		return Base{}, err
	}
	workers, _, _, err := ReadManifests(disk, filepath.Join(dir, ManifestsDir, WorkersDir))
	if err != nil {
		return Base{}, err
	}
	b.Manifests = JoinAll(b.Manifests, workers)
	if b.FluxRuns, b.FluxBuild, err = fluxRunsOnDisk(disk, dir); err != nil {
		return Base{}, err
	}
	b.Allow, b.AllowData, err = ReadAllow(disk, dir)
	return b, err
}

// Unknown is the stand-in when no base is known: the checkout's own
// committed manifests and allow-list, which the pull request may have
// rewritten itself.
func Unknown(disk source.Disk, dir string, committed map[string][]byte) (Base, error) {
	b := Base{From: "no base branch found: judged against this checkout's own committed manifests and allow-list, which a pull request rewrites itself; in CI pass --base-ref (or set GITHUB_BASE_REF)", Manifests: committed}
	var err error
	if b.FluxRuns, b.FluxBuild, err = fluxRunsOnDisk(disk, dir); err != nil {
		return Base{}, err
	}
	b.Allow, b.AllowData, err = ReadAllow(disk, dir)
	return b, err
}

// ReadAllow reads dir's allow-list through the repository's disk rules;
// nil without one.
func ReadAllow(disk source.Disk, dir string) (*Allow, []byte, error) {
	file := filepath.ToSlash(filepath.Join(dir, AllowFile))
	data, err := disk.ReadFile(file)
	if errors.Is(err, source.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	a, err := ParseAllow(file, data)
	return a, data, err
}
