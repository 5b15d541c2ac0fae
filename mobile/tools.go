//go:build tools

package mobile

// The code gobind generates imports these packages; importing them here
// keeps golang.org/x/mobile required in go.mod through `go mod tidy`
// (scripts/mobile-check installs gobind at that version).
import (
	_ "golang.org/x/mobile/bind/java"
	_ "golang.org/x/mobile/bind/seq"
)
