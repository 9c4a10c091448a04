package testenv

import (
	"bytes"
	"sync"
)

// LogBuffer collects a test process's output: a bytes.Buffer safe for
// the process's two writers and a
// reader, bounded to its last 1 MiB.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() > 1<<20 {
		rest := b.b.Bytes()[b.b.Len()-(512<<10):]
		b.b = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return b.b.Write(p)
}

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
