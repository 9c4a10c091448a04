// Package source abstracts where input files come from: the local disk for
// the CLI, ResourceList items for the KRM function, chart files for Helm.
// Paths are slash-separated; relative references resolve against the
// directory of the file that names them.
package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
)

// MaxFileSize bounds any one input file; a recipe or profile is kilobytes,
// so anything this large is a mistake, not a config.
const MaxFileSize = 64 << 20

// ErrNotFound is returned (wrapped) for a file the source does not hold.
var ErrNotFound = errors.New("file not found")

// Source reads files by cleaned slash path.
type Source interface {
	ReadFile(name string) ([]byte, error)
}

// Join resolves ref relative to the directory of from; absolute refs stay.
func Join(from, ref string) string {
	if path.IsAbs(ref) || filepath.IsAbs(ref) {
		return path.Clean(filepath.ToSlash(ref))
	}
	return path.Clean(path.Join(path.Dir(filepath.ToSlash(from)), filepath.ToSlash(ref)))
}

// Disk reads from the local file system.
type Disk struct{}

// ReadFile implements Source.
func (Disk) ReadFile(name string) ([]byte, error) {
	st, err := os.Stat(filepath.FromSlash(name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
		}
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, expected a YAML file", name)
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: %d bytes is over the %d-byte limit for an input file", name, st.Size(), MaxFileSize)
	}
	return os.ReadFile(filepath.FromSlash(name))
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
		return nil, fmt.Errorf("%s: %d bytes is over the %d-byte limit for an input file", name, len(b), MaxFileSize)
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
