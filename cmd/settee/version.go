package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/settee/settee/internal/buildinfo"
)

// version is set at build time:
//
//	go build -ldflags "-X main.version=v0.1.0" ./cmd/settee
var version = "dev"

var versionHelp = cmdHelp{
	usage: "settee version",
	about: `Print the version (set with -ldflags "-X main.version=...", else "dev"),
then the module version, VCS revision and Go version the binary was built
with.`,
	examples: `  settee version`,
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("version")
	if _, err := parseFlags(fs, versionHelp, args, 0, 0, stdout); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "settee %s\n", versionString())
	return err
}

func versionString() string {
	v := version
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var extra []string
	if m := bi.Main.Version; m != "" && m != "(devel)" && m != v {
		extra = append(extra, m)
	}
	if rev := buildinfo.Revision(12, "+dirty"); rev != "" {
		extra = append(extra, rev)
	}
	extra = append(extra, bi.GoVersion)
	return v + " (" + strings.Join(extra, ", ") + ")"
}
