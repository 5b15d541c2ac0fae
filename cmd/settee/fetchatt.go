package main

import (
	"context"
	"io"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync/localpeer"
)

var fetchAttHelp = cmdHelp{
	usage: "settee fetch-attachment [flags] LOCAL.db URL DOCID NAME",
	about: `Download the body of attachment NAME of document DOCID that a pull with
--attachments lazy (or lazy-over=BYTES) left behind, from the database it
was pulled from (URL), into the local store. The transfer is resumed if cut
(HTTP Range), and bytes that do not match the attachment's length and
digest are refused. A body already here is not downloaded again. With
--evict, drop the local body instead (keeping the metadata); no URL then:
settee fetch-attachment --evict LOCAL.db DOCID NAME. Prints
{"id","name","length","downloaded"}.`,
	examples: `  settee pull photos.db http://127.0.0.1:5984/photos --attachments lazy
  settee fetch-attachment photos.db http://127.0.0.1:5984/photos trip/42 full.jpg
  settee fetch-attachment --evict photos.db trip/42 full.jpg`,
	exits: netExits,
}

func runFetchAttachment(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("fetch-attachment")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	var rf remoteFlags
	rf.register(fs)
	evict := fs.Bool("evict", false, "drop the local body instead, keeping the attachment's metadata")
	retries := fs.Int("retries", 5, "resume a cut transfer this many `times` in a row without progress")
	pos, err := parseFlags(fs, fetchAttHelp, args, 3, 4, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	if *evict != (len(pos) == 3) {
		return usageErrorf("give LOCAL.db URL DOCID NAME to fetch, or --evict LOCAL.db DOCID NAME")
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		id, name := pos[len(pos)-2], pos[len(pos)-1]
		if *evict {
			err = db.EvictAttachment(ctx, id, name)
		} else {
			rem, rerr := newRemote(pos[1], &rf, stderr)
			if rerr != nil {
				return rerr
			}
			rem.retries = -1 // the fetch resumes and retries itself
			peer, rerr := newRemotePeer(rem)
			if rerr != nil {
				return rerr
			}
			n := *retries
			if n <= 0 {
				n = -1 // FetchOptions: none
			}
			err = localpeer.FetchAttachmentWith(ctx, peer, db, id, name, localpeer.FetchOptions{Retries: n})
		}
		if err != nil {
			return err
		}
		st, err := db.Attachment(ctx, id, name)
		if err != nil {
			return err
		}
		return out.value(struct {
			ID         string `json:"id"`
			Name       string `json:"name"`
			Length     int64  `json:"length"`
			Downloaded bool   `json:"downloaded"`
		}{id, name, st.Attachment.Length, st.Downloaded})
	})
}
