//go:build unix

package source_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// A named pipe with no writer would block an open forever: refused first.
func TestNamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.yaml")
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	start := time.Now()
	_, err := source.Disk{}.ReadFile(filepath.ToSlash(p))
	require.ErrorContains(t, err, "is a named pipe, not a regular file")
	require.Less(t, time.Since(start), time.Second)
}
