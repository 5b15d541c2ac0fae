package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

var replicationsHelp = cmdHelp{
	usage: "settee replications [flags] HUB-URL",
	about: `List the replications a running hub (settee serve, or a CouchDB) keeps by
itself, from its _scheduler/docs: one line per _replicator document with
its state (running, pending, crashing, completed, failed, ...), source and
target (without credentials), the documents written and, when it crashed,
why. The hub's admin signs in with the URL's credentials, --user and
--password-file, or $SETTEE_USER and $SETTEE_PASSWORD. --json (or
--pretty) prints CouchDB's answer instead.`,
	examples: `  settee replications http://admin:pw@127.0.0.1:5984
  settee replications --json http://127.0.0.1:5984`,
	exits:     []int{exitOK, exitFailure, exitUsage, exitTransient, exitAuth},
	ownOutput: true,
}

func runReplications(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("replications")
	user := fs.String("user", "", "the admin's `name` (default: from the URL, else $SETTEE_USER)")
	pwFile := fs.String("password-file", "", "read the password from this `file` (default: from the URL, else $SETTEE_PASSWORD)")
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, replicationsHelp, args, 1, 1, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	u, err := url.Parse(pos[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("%q is not an http:// or https:// URL of a hub", scrub(pos[0]))
	}
	name, pw := os.Getenv("SETTEE_USER"), os.Getenv("SETTEE_PASSWORD")
	if u.User != nil {
		name = u.User.Username()
		if p, ok := u.User.Password(); ok {
			pw = p
		}
		u.User = nil
	}
	if *user != "" {
		name = *user
	}
	if *pwFile != "" {
		if pw, err = readPassword(*pwFile); err != nil {
			return err
		}
	}
	addSecret(pw)
	u.Path = "/_scheduler/docs"
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if name != "" {
		req.SetBasicAuth(name, pw)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return &exitError{code: exitTransient, msg: fmt.Sprintf("%s: %v", u.Host, scrub(err.Error())), err: err}
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return &exitError{code: exitTransient, msg: err.Error(), err: err}
	}
	switch {
	case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
		return &exitError{code: exitAuth, msg: fmt.Sprintf("%s: %d: the hub's admin may list its replications (--user, --password-file)", u.Host, res.StatusCode)}
	case res.StatusCode != http.StatusOK:
		return &exitError{code: exitFailure, msg: fmt.Sprintf("%s: %d: %s", u.String(), res.StatusCode, scrub(string(body)))}
	}
	if out.json || out.pretty {
		return out.raw(body)
	}
	var list struct {
		Docs []struct {
			DocID  string `json:"doc_id"`
			State  string `json:"state"`
			Source string `json:"source"`
			Target string `json:"target"`
			Info   struct {
				DocsWritten *int64 `json:"docs_written"`
				Error       string `json:"error"`
			} `json:"info"`
		} `json:"docs"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return &exitError{code: exitFailure, msg: fmt.Sprintf("%s: not a hub's _scheduler/docs answer: %v", u.String(), err)}
	}
	for _, d := range list.Docs {
		line := fmt.Sprintf("%-12s %s: %s -> %s", d.State, d.DocID, d.Source, d.Target)
		if d.Info.DocsWritten != nil {
			line += fmt.Sprintf(" (%d written)", *d.Info.DocsWritten)
		}
		if d.Info.Error != "" {
			line += ": " + d.Info.Error
		}
		fmt.Fprintln(stdout, scrub(line))
	}
	return nil
}
