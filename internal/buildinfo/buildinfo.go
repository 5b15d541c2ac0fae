// Package buildinfo reads the version control stamp go build puts in a
// binary, for the CLI's version line and the benchmark's results.
package buildinfo

import "runtime/debug"

// Revision returns the commit the binary was built from, cut to n
// characters, with dirty appended when the tree had changes; "" when the
// binary carries no stamp.
func Revision(n int, dirty string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev string
	var modified bool
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			modified = kv.Value == "true"
		}
	}
	if rev == "" {
		return ""
	}
	if len(rev) > n {
		rev = rev[:n]
	}
	if modified {
		rev += dirty
	}
	return rev
}
