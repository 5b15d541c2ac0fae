package main

import (
	"context"
	"io"

	"github.com/settee/settee/localdb"
)

var infoHelp = cmdHelp{
	usage: "settee info LOCAL.db",
	about: `Print a local store's summary as JSON: its path, persistent UUID,
document counts, update and purge sequences, revision limit, sizes (file,
active and external bytes, as CouchDB's GET /{db}) and a breakdown: bytes of
document bodies, revision metadata, attachments, indexes and free pages
(what "settee compact" gives back), and counts of documents, tombstones,
revisions, leaves, conflicted documents and attachments.`,
	examples: `  settee info notes.db`,
	exits:    storeExits,
}

func runInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("info")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, infoHelp, args, 1, 1, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		info, err := db.Info(ctx)
		if err != nil {
			return err
		}
		st, err := db.Stats(ctx)
		if err != nil {
			return err
		}
		type bytesOut struct {
			Bodies      int64 `json:"bodies"`
			RevMeta     int64 `json:"revision_metadata"`
			Attachments int64 `json:"attachments"`
			Indexes     int64 `json:"indexes"`
			Free        int64 `json:"free"`
			Other       int64 `json:"other"`
		}
		type countsOut struct {
			Docs        int64 `json:"docs"`
			Tombstones  int64 `json:"tombstones"`
			Revisions   int64 `json:"revisions"`
			Leaves      int64 `json:"leaves"`
			Conflicts   int64 `json:"conflicts"`
			Attachments int64 `json:"attachments"`
			// Attachment bodies known by their metadata only (lazy pulls).
			NotDownloaded      int64 `json:"attachments_not_downloaded"`
			NotDownloadedBytes int64 `json:"attachment_bytes_not_downloaded"`
			// Interrupted downloads kept to resume, and the bytes they hold.
			PartialDownloads int64 `json:"partial_downloads"`
			PartialBytes     int64 `json:"partial_download_bytes"`
		}
		return out.value(struct {
			Path        string        `json:"path"`
			UUID        string        `json:"uuid"`
			DocCount    int64         `json:"doc_count"`
			DocDelCount int64         `json:"doc_del_count"`
			UpdateSeq   int64         `json:"update_seq"`
			PurgeSeq    int64         `json:"purge_seq"`
			RevsLimit   int           `json:"revs_limit"`
			Sizes       localdb.Sizes `json:"sizes"`
			Bytes       bytesOut      `json:"bytes"`
			Counts      countsOut     `json:"counts"`
		}{db.Path(), db.UUID(), info.DocCount, info.DocDelCount, info.UpdateSeq, info.PurgeSeq, db.RevsLimit(), st.Sizes,
			bytesOut{st.BodyBytes, st.RevMetaBytes, st.AttachmentBytes, st.IndexBytes, st.FreeBytes, st.OtherBytes},
			countsOut{st.Docs, st.Tombstones, st.Revisions, st.Leaves, st.Conflicts, st.Attachments, st.NotDownloaded, st.NotDownloadedBytes,
				st.PartialDownloads, st.PartialBytes}})
	})
}
