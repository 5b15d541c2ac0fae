package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if os.Getenv(childEnv) == "1" {
		err = runChild(ctx, os.Args[1:], os.Stdout, os.Stderr)
	} else {
		err = run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

// run is the harness: flags in args, the table on stdout, progress on
// stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	res, err := runBench(ctx, cfg, stderr)
	if res != nil {
		writeTable(stdout, res)
		if werr := writeJSON(cfg.Out, res); werr != nil && err == nil {
			err = werr
		}
		if werr := writeSVG(cfg.SVG, res); werr != nil && err == nil {
			err = werr
		}
		fmt.Fprintf(stderr, "wrote %s and %s\n", cfg.Out, cfg.SVG)
		if err == nil && len(res.Errors) > 0 {
			err = fmt.Errorf("%d check(s) failed: %s", len(res.Errors), res.Errors[0])
		}
	}
	return err
}
