package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"
)

// A Revision is one commit of the git repository holding a work tree, read
// from git's objects, never from the work tree: a pull request's checkout
// can change its files but not what the base branch's commit holds.
type Revision struct {
	// Ref is how the commit was named (origin/main); Commit its full hash.
	Ref, Commit string
	top         string // the work tree's top level, where git runs
}

// gitTimeout bounds every git command: a hung git (a lock, a network
// filesystem) ends the run with an error instead of holding CI.
const gitTimeout = 30 * time.Second

// maxGitOutput bounds what one git command may print (a listing of a
// directory's entries, one blob); more is an error, not a memory spike.
const maxGitOutput = MaxRenderTotal + MaxRenderSize

// git runs one git command in dir with hooks and the file-system monitor
// off (reading objects needs neither, and a repository's config must not
// run a program), and returns its stdout.
func git(dir string, args ...string) ([]byte, error) {
	return gitIn(dir, nil, args...)
}

// gitIn is git with stdin.
func gitIn(dir string, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	full := append([]string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-C", dir}, args...)
	cmd := exec.CommandContext(ctx, "git", full...) //nolint:gosec // G204: a fixed program; every argument is an argv word, never a shell word
	var stdout, stderr capped
	stdout.limit, stderr.limit = maxGitOutput, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	if stdout.over {
		return nil, fmt.Errorf("git %s: printed more than %d bytes", args[0], maxGitOutput)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.buf.String())
		if msg == "" {
			msg = err.Error()
		}
		if ctx.Err() != nil {
			msg = fmt.Sprintf("timed out after %s", gitTimeout)
		}
		return nil, errors.New(msg)
	}
	return stdout.buf.Bytes(), nil
}

// capped keeps at most limit bytes and remembers whether there was more.
type capped struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.limit {
		c.over = true
		p = p[:max(0, c.limit-c.buf.Len())]
	}
	c.buf.Write(p)
	return len(p), nil
}

// WorkTreeTop is the top level of the git work tree holding dir.
func WorkTreeTop(dir string) (string, error) {
	out, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s: not in a git work tree: %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// ResolveRevision names the commit ref points at in the repository of the
// work tree dir. ref is data: it may not start with "-", and git reads it
// after --end-of-options, so it can never be an option.
func ResolveRevision(dir, ref string) (Revision, error) {
	if ref == "" || strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, "\x00\n") {
		return Revision{}, fmt.Errorf("%q: expected a git revision (a branch, tag or commit)", ref)
	}
	top, err := WorkTreeTop(dir)
	if err != nil {
		return Revision{}, err
	}
	out, err := git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return Revision{}, fmt.Errorf("%s: no such commit in %s (in CI, fetch the base branch: actions/checkout with fetch-depth: 0)", ref, top)
	}
	return Revision{Ref: ref, Commit: strings.TrimSpace(string(out)), top: top}, nil
}

// Upstream is the branch HEAD's branch tracks (origin/main), "" when it
// tracks none or HEAD is detached.
func Upstream(dir string) string {
	out, err := git(dir, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Short is the commit's abbreviated hash, for messages.
func (r Revision) Short() string {
	if len(r.Commit) > 12 {
		return r.Commit[:12]
	}
	return r.Commit
}

// Rel is dir (a path in the work tree) relative to its top level, as git
// names tree entries ("" for the top level itself).
func (r Revision) Rel(dir string) (string, error) {
	out, err := git(dir, "rev-parse", "--show-prefix")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSpace(string(out)), "/"), nil
}

// TreeEntry is one entry of a directory at a revision.
type TreeEntry struct {
	Name string
	// Regular is a blob with a file mode (100644, 100755); a symlink
	// (120000), a submodule or a directory is not.
	Regular bool
	Size    int64
	// Object is the blob's hash (ReadBlobs).
	Object string
}

// ReadDir lists the entries of dir (slash path from the top level) at the
// revision; a missing directory is an empty one.
func (r Revision) ReadDir(dir string) ([]TreeEntry, error) {
	args := []string{"ls-tree", "-z", "-l", "--full-tree", "--end-of-options", r.Commit}
	if dir != "" && dir != "." {
		args = append(args, "--", dir+"/")
	}
	out, err := git(r.top, args...)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", dir, r.Ref, err)
	}
	var entries []TreeEntry
	for _, line := range strings.Split(string(out), "\x00") {
		if line == "" {
			continue
		}
		// <mode> SP <type> SP <object> SP+ <size> TAB <path>
		meta, name, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("%s at %s: unexpected git ls-tree line %q", dir, r.Ref, line)
		}
		e := TreeEntry{Name: path.Base(name), Regular: f[1] == "blob" && (f[0] == "100644" || f[0] == "100755"), Object: f[2]}
		if e.Regular {
			if e.Size, err = strconv.ParseInt(f[3], 10, 64); err != nil {
				return nil, fmt.Errorf("%s at %s: unexpected size in %q", dir, r.Ref, line)
			}
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// ReadFile reads the regular file name (slash path from the top level) at
// the revision, at most limit bytes; ErrNotFound when it has none there,
// ErrRefused when it is a symlink or not a file.
func (r Revision) ReadFile(name string, limit int64) ([]byte, error) {
	entries, err := r.ReadDir(path.Dir(name))
	if err != nil {
		return nil, err
	}
	shown := fmt.Sprintf("%s at %s", name, r.Ref)
	for _, e := range entries {
		if e.Name != path.Base(name) {
			continue
		}
		if !e.Regular {
			return nil, fmt.Errorf("%s: %w: a symlink, a submodule or a directory, not a file", shown, ErrRefused)
		}
		if e.Size > limit {
			return nil, fmt.Errorf("%s: over the %d-byte limit", shown, limit)
		}
		return git(r.top, "cat-file", "blob", r.Commit+":"+name)
	}
	return nil, fmt.Errorf("%s: %w", shown, ErrNotFound)
}

// ReadBlobs reads the contents of regular entries of one ReadDir, keyed by
// name, with one git process (git cat-file --batch by object hash): a base
// branch of hundreds of manifests costs one process, not one per file. The
// caller bounds the total from the entries' sizes before asking.
func (r Revision) ReadBlobs(entries []TreeEntry) (map[string][]byte, error) {
	var in bytes.Buffer
	for _, e := range entries {
		if !e.Regular || e.Object == "" || strings.ContainsAny(e.Object, " \n") {
			return nil, fmt.Errorf("%s at %s: %w: not a file", e.Name, r.Ref, ErrRefused)
		}
		in.WriteString(e.Object + "\n")
	}
	out := map[string][]byte{}
	if len(entries) == 0 {
		return out, nil
	}
	data, err := gitIn(r.top, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("reading %d files at %s: %w", len(entries), r.Ref, err)
	}
	for _, e := range entries {
		// <object> SP blob SP <size> LF <contents> LF
		header, rest, ok := bytes.Cut(data, []byte("\n"))
		want := fmt.Sprintf("%s blob %d", e.Object, e.Size)
		if !ok || string(header) != want || int64(len(rest)) < e.Size+1 {
			return nil, fmt.Errorf("%s at %s: unexpected git cat-file answer %q; expected %q", e.Name, r.Ref, header, want)
		}
		out[e.Name] = rest[:e.Size:e.Size]
		data = rest[e.Size+1:]
	}
	return out, nil
}
