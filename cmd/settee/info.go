package main

import (
	"context"
	"io"
)

var infoHelp = cmdHelp{
	usage: "settee info LOCAL.db",
	about: `Print a local store's summary as JSON: its path, persistent UUID,
document counts, update sequence and revision limit.`,
	examples: `  settee info notes.db`,
	exits:    true,
}

func runInfo(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flagSet("info")
	pos, err := parseFlags(fs, infoHelp, args, 1, 1, stdout)
	if err != nil {
		return helpOK(err)
	}
	db, err := openStore(pos[0], false)
	if err != nil {
		return err
	}
	defer closeStore(db, &err)
	info, err := db.Info(ctx)
	if err != nil {
		return err
	}
	return writeJSON(stdout, struct {
		Path        string `json:"path"`
		UUID        string `json:"uuid"`
		DocCount    int64  `json:"doc_count"`
		DocDelCount int64  `json:"doc_del_count"`
		UpdateSeq   int64  `json:"update_seq"`
		RevsLimit   int    `json:"revs_limit"`
	}{db.Path(), db.UUID(), info.DocCount, info.DocDelCount, info.UpdateSeq, db.RevsLimit()})
}
