// Package procstat reads this process's own resource counters, for the
// benchmarks that report CPU time or I/O beside wall time (which a loaded
// machine stretches; these it does not).
package procstat

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPU is the CPU time (user and system) this process has used so far, 0
// where the platform does not tell.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// IO returns the counter name of /proc/self/io ("rchar", "wchar",
// "syscr", "syscw", ...) and whether Linux gave it.
func IO(name string) (int64, bool) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
