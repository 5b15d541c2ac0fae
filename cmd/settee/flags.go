package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// cmdHelp is the help text of one subcommand.
type cmdHelp struct {
	usage    string // "settee get [flags] LOCAL.db ID"
	about    string // what it does, a paragraph or two
	examples string // indented shell lines with comments
	exits    []int  // the exit codes the command can give, listed in its help
	// ownOutput: the about text says how the command prints (not by
	// outputHelp's rule, although it takes --json and --pretty).
	ownOutput bool
}

// The exit codes commands share, for cmdHelp.exits.
var (
	storeExits = []int{exitOK, exitFailure, exitUsage, exitNotFound, exitWrongKey}
	writeExits = []int{exitOK, exitFailure, exitUsage, exitNotFound, exitConflict, exitWrongKey}
	netExits   = []int{exitOK, exitFailure, exitUsage, exitTransient, exitAuth, exitNotFound}
	replExits  = []int{exitOK, exitFailure, exitUsage, exitTransient, exitAuth, exitNotFound, exitWrongKey, exitInterrupted}
)

// flagSet returns an empty flag set for a subcommand. Parse it with
// parseFlags, which prints the help on -h/--help.
func flagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("settee "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// errHelpShown is returned by parseFlags after printing the help; the
// command then returns nil.
var errHelpShown = errors.New("help shown")

// parseFlags parses args, allowing flags after the positional arguments
// (`settee pull a.db URL --continuous`), until a "--". It checks the number
// of positional arguments is within [min, max] (max < 0: no limit). On
// --help it prints h to stdout and returns errHelpShown.
func parseFlags(fs *flag.FlagSet, h cmdHelp, args []string, min, max int, stdout io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printHelp(stdout, fs, h)
				return nil, errHelpShown
			}
			return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("%s: %s%s%s", fs.Name(), gnuFlags(err.Error()), expected(fs, err), noPasswordFlag(fs, err)), own: true}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		return nil, usageErrorf("usage: %s", h.usage)
	}
	return pos, nil
}

func printHelp(w io.Writer, fs *flag.FlagSet, h cmdHelp) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", h.usage, strings.TrimSpace(h.about))
	var hasFlags bool
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nFlags:")
		printDefaults(w, fs)
	}
	if fs.Lookup("pretty") != nil && !h.ownOutput {
		fmt.Fprintf(w, "\nOutput:\n  %s\n", strings.ReplaceAll(outputHelp, "\n", "\n  "))
	}
	if h.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(h.examples, "\n"))
	}
	if len(h.exits) > 0 {
		fmt.Fprintf(w, "\n%s\n", exitCodesOf(h.exits))
	}
}

// helpOK turns errHelpShown into success.
func helpOK(err error) error {
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// printDefaults lists the flags GNU-style (--name), as users type them.
func printDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "[]" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n      %s%s\n", line, usage, def)
	})
}

// noPasswordFlag says where a password goes when --password was given to
// a command that takes --password-file: not on the command line, where
// every user of the machine can read it.
func noPasswordFlag(fs *flag.FlagSet, err error) string {
	if fs.Lookup("password-file") == nil || !strings.HasSuffix(err.Error(), "not defined: -password") {
		return ""
	}
	return " (a password on the command line is seen by every user of the machine: use --password-file FILE or $SETTEE_PASSWORD)"
}

var badValueRE = regexp.MustCompile(`invalid value ".*" for flag -([a-z-]+): parse error$`)

// expected says what a flag whose value did not parse takes, where the
// flag package says only "parse error".
func expected(fs *flag.FlagSet, err error) string {
	m := badValueRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	f := fs.Lookup(m[1])
	if f == nil {
		return ""
	}
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.durationValue":
		return " (expected a duration such as 30s, 2m or 1h30m)"
	case "*flag.intValue", "*flag.int64Value":
		return " (expected a whole number)"
	}
	return ""
}

// gnuFlags rewrites the flag package's "-name" in an error message as
// "--name", the spelling the help shows.
func gnuFlags(msg string) string {
	for _, p := range []string{"flag ", "defined: ", "argument: "} {
		msg = strings.ReplaceAll(msg, p+"-", p+"--")
	}
	return msg
}
