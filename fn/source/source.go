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
// reads only inside a root (render-all on a pull request).
type Disk struct {
	// root is absolute with symlinks resolved; "" means unconfined.
	root string
}

// Confine returns a Disk that reads only regular files inside root, after
// resolving symlinks; root itself may be given relative or through a link.
func Confine(root string) (Disk, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Disk{}, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Disk{}, fmt.Errorf("root %s: %w", root, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return Disk{}, fmt.Errorf("root %s: %w", root, err)
	}
	if !st.IsDir() {
		return Disk{}, fmt.Errorf("root %s: not a directory", root)
	}
	return Disk{root: real}, nil
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

// Resolve checks name against the root and returns the real path to open:
// the lexical path first (so nothing outside the root is even looked at),
// then the path with symlinks resolved. Both failures read the same, so the
// answer is no oracle for which host files exist.
func (d Disk) Resolve(name string) (string, error) {
	p := filepath.FromSlash(name)
	if d.root == "" {
		return p, nil
	}
	// The root is not named: the message reads the same on every machine.
	outside := refused("%s: not a file inside the root; refused: input paths must stay inside the repository (render-all: the git work tree holding DIR; --root to choose); absolute paths, `..` escapes and symlinks out of it are not followed", name)
	abs, err := filepath.Abs(p)
	if err != nil || !Within(d.root, abs) {
		return "", outside
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Not found, or a link to somewhere that is not: say only that
			// nothing was found inside the root.
			return "", fmt.Errorf("%s: %w", name, ErrNotFound)
		}
		return "", outside
	}
	if !Within(d.root, real) {
		return "", outside
	}
	return real, nil
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
// the runner either.
const MaxRenderSize = 64 << 20

// ReadLimited reads at most max bytes of the regular file p, failing when
// there is more; name is how errors show it. Opening refuses anything that
// has become a non-regular file since it was checked.
func ReadLimited(name, p string, max int) ([]byte, error) {
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
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", name, err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("%s: over the %d-byte limit for an input file", name, max)
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
