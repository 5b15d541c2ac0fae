package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

var importHelp = cmdHelp{
	usage: "settee import [flags] LOCAL.db < docs.ndjson",
	about: `Write the documents read from stdin, one JSON document per line (NDJSON,
what "settee export" writes), into a local store, created if missing.

A line with _rev and _revisions is restored as it was, as a replication
would write it: the same revision ids, merged into the document's history
(a revision the store has already is skipped), so importing an export
twice changes nothing. Any other line is a new edit, with "settee put"'s
rules: without _rev it creates the document (an existing one is a
conflict), with _rev it updates that revision; without _id it gets a
random id.

The whole input is read and checked first: a line that is not a JSON
document, or has a bad id or revision, stops the import with its line
number (exit 2) and nothing is written. Then the documents are written in
batches. A document the store refuses (a conflict, a missing attachment
stub) is named on stderr with its line and the others are written; the
command then exits 6 (conflicts only) or 1. Prints {"docs_read",
"docs_written", "doc_write_failures"}.`,
	examples: `  settee export notes.db > notes.ndjson && settee import copy.db < notes.ndjson
  printf '%s\n' '{"_id":"a","n":1}' '{"_id":"b","n":2}' | settee import notes.db`,
	exits: []int{exitOK, exitFailure, exitUsage, exitConflict}, // it creates the store: never 5
}

// Batches of import: at most importBatch documents or importBatchBytes of
// JSON, whichever comes first.
const (
	importBatch      = 500
	importBatchBytes = 8 << 20
)

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return importFrom(ctx, args, os.Stdin, stdout, stderr)
}

func importFrom(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flagSet("import")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, importHelp, args, 1, 1, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	spool, n, err := spoolLines(stdin)
	if spool != nil {
		defer os.Remove(spool.Name())
		defer spool.Close()
	}
	if err != nil {
		return err
	}
	records, err := spool.reader()
	if err != nil {
		return err
	}
	return withStore(pos[0], true, ks, func(db *localdb.DB) error {
		st := importStats{Read: n}
		var firstFail string
		var otherFail bool
		err := readBatches(records, func(b importBatchT) error {
			var res []couchdoc.DocResult
			var err error
			if b.history {
				res, err = db.BulkDocsLazy(ctx, b.docs)
			} else {
				res, err = db.BulkDocs(ctx, b.docs, true)
			}
			if err != nil {
				return fmt.Errorf("import: lines %d-%d: %w", b.lines[0], b.lines[len(b.lines)-1], err)
			}
			for i, r := range res {
				if r.Error == "" {
					st.Written++
					continue
				}
				st.Failed++
				msg := fmt.Sprintf("line %d: %s: %s: %s", b.lines[i], r.ID, r.Error, r.Reason)
				fmt.Fprintf(stderr, "settee: import: %s\n", msg)
				if firstFail == "" {
					firstFail = msg
				}
				otherFail = otherFail || r.Error != "conflict"
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := out.value(st); err != nil {
			return err
		}
		if st.Failed > 0 {
			code := exitConflict
			if otherFail {
				code = exitFailure
			}
			return &exitError{code: code, msg: fmt.Sprintf("import: %d of %s not written (first: %s)", st.Failed, plural(st.Read, "document"), firstFail)}
		}
		return nil
	})
}

// importStats is what import prints.
type importStats struct {
	Read    int64 `json:"docs_read"`
	Written int64 `json:"docs_written"`
	Failed  int64 `json:"doc_write_failures"`
}

// spoolLines reads every line of r, checks it is a document import can
// write, and copies it to a temporary file (the caller removes it), so
// that bad input is refused before anything is written and memory stays
// bounded. It returns the file and the number of documents.
func spoolLines(r io.Reader) (*spoolFile, int64, error) {
	f, err := newSpool()
	if err != nil {
		return nil, 0, err
	}
	w := bufio.NewWriterSize(f.writer(), 256<<10)
	br := bufio.NewReaderSize(r, 256<<10)
	var n, line int64
	for {
		b, err := readLine(br)
		if err == io.EOF {
			break
		}
		line++
		if err != nil {
			return f, 0, importLineErr(line, err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if _, _, err := parseImportLine(b); err != nil {
			return f, 0, importLineErr(line, err)
		}
		// Each spooled record is the input's line number and the line.
		fmt.Fprintf(w, "%d ", line)
		w.Write(bytes.TrimRight(b, "\r\n"))
		w.WriteByte('\n')
		n++
	}
	return f, n, w.Flush()
}

// readLine reads one line of at most maxJSONArg bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		b, err := br.ReadSlice('\n')
		line = append(line, b...)
		if int64(len(line)) > maxJSONArg {
			return nil, fmt.Errorf("longer than the %d MiB limit of a document", maxJSONArg>>20)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil
		}
		return line, err
	}
}

func importLineErr(line int64, err error) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf("import: line %d: %v (nothing was written)", line, err), err: err}
}

// parseImportLine parses one line as put does, and says whether it is a
// revision to restore (_rev and _revisions) rather than a new edit.
func parseImportLine(b []byte) (*couchdoc.Doc, bool, error) {
	doc, err := couchdoc.ParseDoc(b)
	if err != nil {
		return nil, false, fmt.Errorf("document: %w", err)
	}
	history := doc.Rev != "" && doc.Revisions != nil
	if doc.ID == "" {
		if history {
			return nil, false, errors.New("a document with _revisions needs its _id")
		}
		doc.ID = randomID()
	}
	if err := couchdoc.ValidateDocID(doc.ID); err != nil {
		return nil, false, err
	}
	if err := checkRev("_rev", doc.Rev, doc.ID); err != nil {
		return nil, false, errors.Unwrap(err)
	}
	return doc, history, nil
}

// importBatchT is a run of documents written with one call.
type importBatchT struct {
	history bool
	docs    []*couchdoc.Doc
	lines   []int64
}

// readBatches reads the spooled records back and calls fn with runs of
// documents of the same kind (restored or new edits), in input order.
func readBatches(r io.Reader, fn func(importBatchT) error) error {
	br := bufio.NewReaderSize(r, 256<<10)
	var cur importBatchT
	var size int
	flush := func() error {
		if len(cur.docs) == 0 {
			return nil
		}
		err := fn(cur)
		cur, size = importBatchT{}, 0
		return err
	}
	for {
		rec, err := readLine(br)
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			return err
		}
		var line int64
		var rest []byte
		if i := bytes.IndexByte(rec, ' '); i > 0 {
			fmt.Sscan(string(rec[:i]), &line)
			rest = rec[i+1:]
		}
		doc, history, err := parseImportLine(rest)
		if err != nil {
			return importLineErr(line, err)
		}
		if len(cur.docs) > 0 && (history != cur.history || len(cur.docs) >= importBatch || size+len(rest) > importBatchBytes) {
			if err := flush(); err != nil {
				return err
			}
		}
		cur.history = history
		cur.docs = append(cur.docs, doc)
		cur.lines = append(cur.lines, line)
		size += len(rest)
	}
}

// spoolFile is import's temporary copy of its input, encrypted (AES-CTR)
// with a key that lives in this process's memory only: the documents may
// be bound for an encrypted store, and none should reach the disk in the
// clear on their way.
type spoolFile struct {
	*os.File
	block cipher.Block
	iv    [aes.BlockSize]byte
}

func newSpool() (*spoolFile, error) {
	var key [32]byte
	s := &spoolFile{}
	if _, err := rand.Read(key[:]); err != nil {
		return nil, err
	}
	if _, err := rand.Read(s.iv[:]); err != nil {
		return nil, err
	}
	var err error
	if s.block, err = aes.NewCipher(key[:]); err != nil {
		return nil, err
	}
	if s.File, err = os.CreateTemp("", "settee-import-*.ndjson"); err != nil {
		return nil, err
	}
	return s, nil
}

// writer writes the spool from its start.
func (s *spoolFile) writer() io.Writer {
	return cipher.StreamWriter{S: cipher.NewCTR(s.block, s.iv[:]), W: s.File}
}

// reader reads the spool back from its start.
func (s *spoolFile) reader() (io.Reader, error) {
	if _, err := s.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return cipher.StreamReader{S: cipher.NewCTR(s.block, s.iv[:]), R: s.File}, nil
}
