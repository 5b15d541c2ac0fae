package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

var attachmentHelp = cmdHelp{
	usage: "settee attachment get [flags] LOCAL.db ID NAME | put [flags] LOCAL.db ID NAME FILE|-",
	about: `Read or write an attachment's raw bytes, as CouchDB's
GET and PUT /{db}/{doc}/{name} do: no base64, no JSON.

get writes the bytes of attachment NAME of document ID (the winning
revision, or --rev) to stdout, or to a file with --output; --info prints
its metadata as JSON instead ({"content_type","length","digest","revpos",
"downloaded"}). A body a lazy pull left behind must be fetched first
("settee fetch-attachment"): get then exits 5 and says so.

put stores FILE's bytes (- for stdin) as attachment NAME of document ID
in a new revision (the store is created if missing). As in CouchDB, a new
document needs no revision, an existing one needs --rev (the revision
this edit replaces) or --update (the current winner); a stale revision is
a conflict (exit 6). The content type is --content-type, else guessed
from FILE's extension, else application/octet-stream. Prints
{"ok":true,"id":...,"rev":...}.`,
	examples: `  settee attachment put photos.db trip/42 full.jpg ./IMG_0042.jpg --update
  settee attachment get photos.db trip/42 full.jpg > full.jpg
  settee attachment get photos.db trip/42 full.jpg --output full.jpg
  settee attachment get photos.db trip/42 full.jpg --info
  tar c notes | settee attachment put backup.db notes latest.tar - --content-type application/x-tar`,
	exits: writeExits,
}

func runAttachment(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("attachment")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	rev := fs.String("rev", "", "get: read this `revision`; put: the revision this edit replaces")
	update := fs.Bool("update", false, "put: write on the current winning revision (no --rev needed)")
	ctype := fs.String("content-type", "", "put: the attachment's content `type` (default: from FILE's extension)")
	output := fs.String("output", "", "get: write the bytes to this `file` instead of stdout")
	info := fs.Bool("info", false, "get: print the attachment's metadata as JSON instead of its bytes")
	va := validateAsFlag(fs)
	pos, err := parseFlags(fs, attachmentHelp, args, 4, 5, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	if err := va.check(); err != nil {
		return err
	}
	switch {
	case pos[0] == "get" && len(pos) == 4:
		if *update || *ctype != "" {
			return usageErrorf("attachment get: --update and --content-type are put's flags")
		}
	case pos[0] == "put" && len(pos) == 5:
		if *output != "" || *info {
			return usageErrorf("attachment put: --output and --info are get's flags")
		}
		if *update && *rev != "" {
			return usageErrorf("attachment put: give --rev or --update, not both")
		}
	default:
		return usageErrorf("usage: %s", attachmentHelp.usage)
	}
	path, id, name := pos[1], pos[2], pos[3]
	if err := checkRev("--rev", *rev, id); err != nil {
		return err
	}
	if couchdoc.IsLocalID(id) {
		return usageErrorf("_local documents do not accept attachments")
	}
	if name == "" {
		return usageErrorf("the attachment name is empty")
	}
	if pos[0] == "get" {
		return withStore(path, false, ks, func(db *localdb.DB) error {
			return getAttachment(ctx, db, id, *rev, name, *output, *info, stdout, out)
		})
	}
	var body io.Reader = os.Stdin
	if file := pos[4]; file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("attachment put: %v", err), err: err}
		}
		defer f.Close()
		body = f
		if *ctype == "" {
			*ctype = mime.TypeByExtension(filepath.Ext(file))
		}
	}
	if *ctype == "" {
		*ctype = "application/octet-stream"
	}
	return va.withStore(path, true, ks, func(db *localdb.DB) error {
		newRev, err := putAttachment(ctx, db, id, *rev, *update, name, *ctype, body)
		if err != nil {
			return fmt.Errorf("attachment put %s %s: %w", id, name, err)
		}
		return out.value(okResult{true, id, newRev})
	})
}

func getAttachment(ctx context.Context, db *localdb.DB, id, rev, name, output string, info bool, stdout io.Writer, out *output) error {
	if info {
		doc, err := db.Get(ctx, id, localdb.GetOptions{Rev: rev})
		if err != nil {
			return fmt.Errorf("attachment get %s: %w", id, err)
		}
		a := doc.Attachments[name]
		if a == nil {
			return fmt.Errorf("attachment get %s %s: %w", id, name, couchdoc.Errorf(couchdoc.ErrNotFound, "Document is missing attachment"))
		}
		return out.value(struct {
			ContentType string `json:"content_type"`
			Length      int64  `json:"length"`
			Digest      string `json:"digest"`
			RevPos      int    `json:"revpos"`
			Downloaded  bool   `json:"downloaded"`
		}{a.ContentType, a.Length, a.Digest, a.RevPos, !a.NotDownloaded})
	}
	_, body, err := db.OpenAttachment(ctx, id, rev, name)
	if errors.Is(err, localdb.ErrAttachmentNotDownloaded) {
		return &exitError{code: exitNotFound, err: err, msg: fmt.Sprintf(
			"attachment get %s %s: the body was not downloaded (lazy pull): settee fetch-attachment %s %s %s %s fetches it", id, name, db.Path(), lazySource(ctx, db), id, name)}
	}
	if err != nil {
		return fmt.Errorf("attachment get %s %s: %w", id, name, err)
	}
	defer body.Close()
	w := stdout
	var f *os.File
	if output != "" {
		if f, err = os.Create(output); err != nil {
			return err
		}
		w = f
	}
	_, err = io.Copy(w, body)
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(output)
		}
	}
	return err
}

// putAttachment writes a new revision of id with attachment name holding
// body's bytes. rev is the revision replaced ("" with update: the winner;
// "" without: a new document).
func putAttachment(ctx context.Context, db *localdb.DB, id, rev string, update bool, name, ctype string, body io.Reader) (string, error) {
	doc := &couchdoc.Doc{ID: id, Body: []byte("{}")}
	if rev != "" || update {
		cur, err := db.Get(ctx, id, localdb.GetOptions{Rev: rev})
		if err != nil && !(update && errors.Is(err, couchdoc.ErrNotFound)) {
			return "", err
		}
		if err == nil {
			doc = cur
		}
	}
	if doc.Attachments == nil {
		doc.Attachments = map[string]*couchdoc.Attachment{}
	}
	doc.Attachments[name] = &couchdoc.Attachment{Name: name, ContentType: ctype, Body: body}
	return db.Put(ctx, doc)
}
