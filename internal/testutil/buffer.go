package testutil

import (
	"bytes"
	gosync "sync"
)

// SyncBuffer is a bytes.Buffer safe for concurrent use: a child process's
// output, written by exec's copying goroutine and read by the test (or
// its failure message) while the child may still write.
type SyncBuffer struct {
	mu  gosync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Bytes returns a copy of what was written so far.
func (b *SyncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
