package procstat

import (
	"os"
	"runtime"
	"testing"
)

// TestCounters: CPU time grows with work, and on Linux the bytes written
// grow by what a write passes.
func TestCounters(t *testing.T) {
	c0 := CPU()
	x := 0
	for i := range 50_000_000 {
		x += i ^ x
	}
	if CPU() <= c0 {
		t.Fatalf("CPU did not grow (%d)", x)
	}
	w0, ok := IO("wchar")
	if runtime.GOOS != "linux" {
		t.Skip("no /proc/self/io")
	}
	if !ok {
		t.Fatal("no wchar in /proc/self/io")
	}
	f, err := os.Create(t.TempDir() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if w1, _ := IO("wchar"); w1-w0 < 4096 {
		t.Fatalf("wchar %d -> %d after a 4096-byte write", w0, w1)
	}
	if _, ok := IO("nonesuch"); ok {
		t.Fatal("a counter /proc/self/io does not have")
	}
}
