// Package source abstracts where input files come from: the local disk for
// the CLI and render-all, ResourceList items for the KRM function, chart
// files for Helm. Paths are slash-separated; relative references resolve
// against the directory of the file that names them.
//
// It is also the one place that decides which files a run may read at all
// (docs/reliability.md): a pull request controls every path a run names, so
// a Disk with a Root reads only regular files that resolve, symlinks
// followed, to a place inside that root, and every read is size-limited.
package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// MaxFileSize bounds any one input file; a recipe or profile is kilobytes
// (the largest shipped one is 26 KB), so anything this large is a mistake,
// not a config. Parsed and merged, input costs up to ~150 times its size in
// memory (docs/reliability.md), so this also bounds memory; recipe.
// MaxRunInput bounds the files of one run together.
const MaxFileSize = 1 << 20

// ErrNotFound is returned (wrapped) for a file the source does not hold.
var ErrNotFound = errors.New("file not found")

// ErrRefused is returned (wrapped) for a path the source will not read: one
// outside the root, or not a regular file.
var ErrRefused = errors.New("refused")

// refusedError is a refusal; its text is the message alone.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return ErrRefused }

func refused(format string, args ...any) error {
	return &refusedError{fmt.Sprintf(format, args...)}
}

// Source reads files by cleaned slash path.
type Source interface {
	ReadFile(name string) ([]byte, error)
}

// Join resolves ref relative to the directory of from; absolute refs stay
// (a confined Disk then refuses them unless they are inside its root).
func Join(from, ref string) string {
	if path.IsAbs(ref) || filepath.IsAbs(ref) {
		return path.Clean(filepath.ToSlash(ref))
	}
	return path.Clean(path.Join(path.Dir(filepath.ToSlash(from)), filepath.ToSlash(ref)))
}

// Disk reads from the local file system. The zero Disk reads any regular
// file (the CLI, run by a user on their own files); Confine gives one that
// reads only inside a root (render-all on a pull request), ConfineRepo one
// that in a git work tree also reads only the files git tracks.
type Disk struct {
	// root is absolute with symlinks resolved; "" means unconfined. given
	// is the root as named (absolute, links not resolved), so a path
	// spelled through it is inside too.
	root, given string
	// tracked, when not nil, holds the slash paths relative to root of the
	// files git tracks: no other file is read. The files of a checked-out
	// git submodule are tracked (by the submodule's own index).
	tracked map[string]bool
	// unchecked are the submodules git tracks whose files are not checked
	// out (slash paths relative to root): a path below one is not found,
	// and the error says how to check it out.
	unchecked []string
	// initialized lists, when first asked, the submodules only `git
	// submodule init` registered (no files checked out); nil outside git.
	initialized func() []string
}

// Confine returns a Disk that reads only regular files inside root, after
// resolving symlinks; root itself may be given relative or through a link.
func Confine(root string) (Disk, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Disk{}, err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Disk{}, fmt.Errorf("root %s: %w", root, err)
	}
	st, err := os.Stat(resolved)
	if err != nil {
		return Disk{}, fmt.Errorf("root %s: %w", root, err)
	}
	if !st.IsDir() {
		return Disk{}, fmt.Errorf("root %s: not a directory", root)
	}
	return Disk{root: resolved, given: abs}, nil
}

// Root is the confining directory, "" for an unconfined Disk.
func (d Disk) Root() string { return d.root }

// Within reports whether p (absolute, clean) is root or below it.
func Within(root, p string) bool {
	if p == root {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// maxLinks bounds the symlinks followed for one path, as the kernel does.
const maxLinks = 40

// Resolve checks name against the root and returns the real path to open.
// The rule (docs/reliability.md, "CI on untrusted pull requests"):
//
//   - the path is judged lexically first, so nothing outside the root is
//     ever looked at;
//   - inside, it is walked one component at a time with Lstat: a directory
//     reached through a symlink is refused whatever it points at, and a
//     symlinked file is followed only when its target, judged the same way,
//     is inside the root;
//   - every path that leaves the root reads the same, whether what it names
//     exists or not, so the answer is no oracle for which host files exist;
//   - in a git work tree (ConfineRepo) only the files git tracks are read.
func (d Disk) Resolve(name string) (string, error) {
	p := filepath.FromSlash(name)
	if d.root == "" {
		return p, nil
	}
	// The root is not named: the message reads the same on every machine.
	outside := refused("%s: not a file inside the root; refused: input paths must stay inside the repository (render-all: the git work tree holding DIR; --root to choose); absolute paths, `..` escapes and symlinks out of it are not followed", name)
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", outside
	}
	cur, ok := d.inside(abs)
	if !ok {
		return "", outside
	}
	for links := 0; ; links++ {
		rel, err := filepath.Rel(d.root, cur)
		if err != nil {
			return "", outside
		}
		at, link, err := d.walk(name, rel)
		if err != nil {
			return "", d.uncheckedSubmodule(err, rel)
		}
		if link == "" {
			if d.tracked != nil && !d.tracked[filepath.ToSlash(rel)] && rel != "." {
				return "", refused("%s: not tracked by git; refused: in a git work tree only the files git tracks are read (a file an earlier CI step wrote is not the pull request's; --include-untracked to read it)", name)
			}
			return at, nil
		}
		if links >= maxLinks {
			return "", outside
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(at), link)
		}
		if cur, ok = d.inside(filepath.Clean(link)); !ok {
			return "", outside
		}
	}
}

// Inside reports whether name (a slash path, relative to the working
// directory or absolute) is the root or below it, judged lexically: for a
// path nothing is read through, such as a run's recipe root. An
// unconfined Disk holds every path.
func (d Disk) Inside(name string) bool {
	if d.root == "" {
		return true
	}
	abs, err := filepath.Abs(filepath.FromSlash(name))
	if err != nil {
		return false
	}
	_, ok := d.inside(abs)
	return ok
}

// RelPath is p (a file inside the root) as a slash path relative to the
// root, symlinks resolved; an unconfined Disk returns p cleaned.
func (d Disk) RelPath(p string) (string, error) {
	at, err := d.Resolve(filepath.ToSlash(p))
	if err != nil {
		return "", err
	}
	if d.root == "" {
		return filepath.ToSlash(filepath.Clean(p)), nil
	}
	rel, err := filepath.Rel(d.root, at)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// uncheckedSubmodule says that a file not found lies in a git submodule
// that is not checked out, with the command that checks it out.
func (d Disk) uncheckedSubmodule(err error, rel string) error {
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	rel = filepath.ToSlash(rel)
	unchecked := d.unchecked
	if d.initialized != nil {
		unchecked = append(slices.Clip(unchecked), d.initialized()...)
	}
	for _, m := range unchecked {
		if strings.HasPrefix(rel, m+"/") {
			return fmt.Errorf("%w; it is in the git submodule %s, which is not checked out: expected `git submodule update --init %s` first (in CI: check out with submodules)", err, m, m)
		}
	}
	return err
}

// inside maps abs into the real root: as it is when it is below the real
// root, rebased when it is spelled through the root as given.
func (d Disk) inside(abs string) (string, bool) {
	if Within(d.root, abs) {
		return abs, true
	}
	if d.given != "" && Within(d.given, abs) {
		rel, err := filepath.Rel(d.given, abs)
		if err == nil {
			return filepath.Join(d.root, rel), true
		}
	}
	return "", false
}

// walk Lstats rel's components below the root. It returns the path reached
// and, when its last component is a symlink, the link's target (unread
// otherwise); a symlinked directory on the way is refused.
func (d Disk) walk(name, rel string) (string, string, error) {
	at := d.root
	if rel == "." {
		return at, "", nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		next := filepath.Join(at, part)
		st, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
				return "", "", fmt.Errorf("%s: %w", name, ErrNotFound)
			}
			return "", "", fmt.Errorf("%s: cannot read: %w", name, errors.Unwrap(err))
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			if i < len(parts)-1 {
				return "", "", refused("%s: %s is a symlinked directory; refused: directories are never entered through a link (a link could list or read the runner's directories)", name, filepath.ToSlash(filepath.Join(parts[:i+1]...)))
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", "", fmt.Errorf("%s: cannot read: %w", name, errors.Unwrap(err))
			}
			return next, target, nil
		}
		if i < len(parts)-1 && !st.IsDir() {
			return "", "", fmt.Errorf("%s: %w", name, ErrNotFound)
		}
		at = next
	}
	return at, "", nil
}

// dirInRoot is dir relative to the root, or the one refusal for a
// directory outside it.
func (d Disk) dirInRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	cur, ok := d.inside(abs)
	if !ok {
		return "", refused("%s: not a directory inside the root; refused", filepath.ToSlash(dir))
	}
	return filepath.Rel(d.root, cur)
}

// CheckDir refuses a directory the rule would not enter: outside the root,
// through a symlinked directory, or a symlink itself. A missing directory
// is fine (it is created, see WriteFile).
func (d Disk) CheckDir(dir string) error {
	if d.root == "" {
		return nil
	}
	rel, err := d.dirInRoot(dir)
	if err != nil {
		return err
	}
	_, link, err := d.walk(filepath.ToSlash(dir), rel)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return err
	case link != "":
		return refused("%s: is a symlink; refused: files are never written or deleted through a link", filepath.ToSlash(dir))
	}
	return nil
}

// ReadFile implements Source: a regular file, read through a limited reader
// (a device reports size 0 and never ends; a FIFO blocks on open, so the
// type is checked before opening).
func (d Disk) ReadFile(name string) ([]byte, error) {
	p, err := d.Resolve(name)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
		}
		return nil, fmt.Errorf("%s: cannot read: %w", name, errors.Unwrap(err))
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, expected a YAML file", name)
	}
	if !st.Mode().IsRegular() {
		return nil, refused("%s: is a %s, not a regular file; expected a YAML file", name, kind(st.Mode()))
	}
	return ReadLimited(name, p, MaxFileSize)
}

// MaxRenderSize bounds a rendered manifest file read back (render-all's
// committed output, diff's inputs): a render is larger than its inputs
// (1,000 worker groups are a few MB), yet must not be a way to exhaust
// the runner either; MaxRenderTotal bounds all of them in one command
// (three 60 MB committed manifests took 24 s and printed 186 MB before).
const (
	MaxRenderSize  = 16 << 20
	MaxRenderTotal = 32 << 20
)

// RenderBudget counts the rendered files one command reads back against
// MaxRenderTotal.
type RenderBudget struct{ used int64 }

// Take charges a file of size bytes (as stat reports it, before reading).
func (b *RenderBudget) Take(name string, size int64) error {
	b.used += size
	if b.used > MaxRenderTotal {
		return fmt.Errorf("%s: the rendered files read add up to more than %d bytes with this one; expected a repository's manifests to be at most that much together (docs/reliability.md)", name, MaxRenderTotal)
	}
	return nil
}

// ReadLimited reads at most limit bytes of the regular file p, failing when
// there is more; name is how errors show it. Opening refuses anything that
// has become a non-regular file since it was checked.
func ReadLimited(name, p string, limit int) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", name, errors.Unwrap(err))
	}
	defer func() { _ = f.Close() }() // opened read-only: nothing to flush
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return nil, refused("%s: is a %s, not a regular file; expected a YAML file", name, kind(st.Mode()))
	}
	if st.Size() > int64(limit) {
		return nil, fmt.Errorf("%s: over the %d-byte limit for an input file", name, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", name, err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%s: over the %d-byte limit for an input file", name, limit)
	}
	return b, nil
}

// kind names a non-regular file type.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}

// Memory holds files in memory, keyed by cleaned slash path.
type Memory map[string][]byte

// ReadFile implements Source.
func (m Memory) ReadFile(name string) ([]byte, error) {
	b, ok := m[path.Clean(name)]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s: over the %d-byte limit for an input file", name, MaxFileSize)
	}
	return b, nil
}

// Names lists the files held, sorted.
func (m Memory) Names() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
