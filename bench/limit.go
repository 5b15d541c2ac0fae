package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/settee/settee/internal/procstat"
	"github.com/settee/settee/internal/wire"
	_ "modernc.org/sqlite" // the plain-SQLite baseline of the limit
)

// pullLimit measures the least work a pull can do: stream the winning
// revisions (_all_docs?include_docs=true) and the attachment bytes with no
// processing, then insert the same bodies into a plain SQLite table in one
// transaction.
type pullLimit struct {
	StreamSeconds float64 `json:"stream_seconds"`
	InsertSeconds float64 `json:"insert_seconds"`
	// Seconds is StreamSeconds + InsertSeconds.
	Seconds       float64 `json:"seconds"`
	Requests      int     `json:"requests"`
	BytesReceived int64   `json:"bytes_received"`
	Rows          int     `json:"rows"`
	// ServerCPUSeconds is the server's CPU time during the stream.
	ServerCPUSeconds float64 `json:"server_cpu_seconds,omitempty"`
	// InsertCPUSeconds is the harness's CPU time during the insert: what
	// SQLite alone costs to store the pull's bytes (the pull's client CPU
	// target is measured against it).
	InsertCPUSeconds float64 `json:"insert_cpu_seconds,omitempty"`
}

// higherBound is the higher of the stream and the insert: a pull that
// overlapped them perfectly would take that long.
func (l *pullLimit) higherBound() float64 { return max(l.StreamSeconds, l.InsertSeconds) }

func measurePullLimit(ctx context.Context, ds *Dataset, dbURL, dir string) (*pullLimit, error) {
	res := &pullLimit{}
	docsFile := filepath.Join(dir, "limit-all-docs.json")
	attDir := filepath.Join(dir, "limit-atts")
	if err := os.MkdirAll(attDir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(attDir)
	defer os.Remove(docsFile)

	// Stream: the bytes go to the page cache through a buffered writer.
	start := time.Now()
	n, err := fetchTo(ctx, dbURL+"/_all_docs?include_docs=true", docsFile)
	if err != nil {
		return nil, err
	}
	res.Requests++
	res.BytesReceived += n
	var atts []string
	for i := 0; i < ds.Count(); i++ {
		if !ds.hasAttachment(i) {
			continue
		}
		g := ds.Doc(i)
		f := filepath.Join(attDir, g.ID)
		n, err := fetchTo(ctx, dbURL+"/"+wire.EscapeDocID(g.ID)+"/"+wire.EscapeAttachment(g.Att.Name), f)
		if err != nil {
			return nil, err
		}
		res.Requests++
		res.BytesReceived += n
		atts = append(atts, f)
	}
	res.StreamSeconds = time.Since(start).Seconds()

	// Insert: parse the rows and write them in one transaction.
	start, cpu0 := time.Now(), procstat.CPU()
	rows, err := insertPlain(ctx, filepath.Join(dir, "limit.sqlite"), docsFile, atts)
	if err != nil {
		return nil, fmt.Errorf("plain SQLite insert: %w", err)
	}
	res.InsertSeconds = time.Since(start).Seconds()
	res.InsertCPUSeconds = (procstat.CPU() - cpu0).Seconds()
	res.Rows = rows
	res.Seconds = res.StreamSeconds + res.InsertSeconds
	return res, nil
}

// hasAttachment reports whether document i has an attachment, without
// generating it.
func (d *Dataset) hasAttachment(i int) bool { return d.BigAttachment > 0 || i%100 == 50 }

func fetchTo(ctx context.Context, u, path string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", redact(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: status %d", redact(u), resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := io.Copy(w, resp.Body)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func insertPlain(ctx context.Context, dbPath, docsFile string, atts []string) (int, error) {
	_ = os.Remove(dbPath)
	defer os.Remove(dbPath)
	defer os.Remove(dbPath + "-wal")
	defer os.Remove(dbPath + "-shm")
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE docs (id TEXT PRIMARY KEY, rev TEXT NOT NULL, body BLOB NOT NULL);
		CREATE TABLE atts (id TEXT NOT NULL, chunk INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (id, chunk))`); err != nil {
		return 0, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	insDoc, err := tx.PrepareContext(ctx, `INSERT INTO docs (id, rev, body) VALUES (?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(docsFile)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	if err := seekRows(dec); err != nil {
		return 0, err
	}
	rows := 0
	for dec.More() {
		var row struct {
			ID    string `json:"id"`
			Value struct {
				Rev string `json:"rev"`
			} `json:"value"`
			Doc json.RawMessage `json:"doc"`
		}
		if err := dec.Decode(&row); err != nil {
			return rows, err
		}
		if _, err := insDoc.ExecContext(ctx, row.ID, row.Value.Rev, []byte(row.Doc)); err != nil {
			return rows, err
		}
		rows++
	}
	insAtt, err := tx.PrepareContext(ctx, `INSERT INTO atts (id, chunk, data) VALUES (?, ?, ?)`)
	if err != nil {
		return rows, err
	}
	buf := make([]byte, 1<<20)
	for _, p := range atts {
		if err := insertChunks(ctx, insAtt, p, buf); err != nil {
			return rows, err
		}
	}
	return rows, tx.Commit()
}

func insertChunks(ctx context.Context, ins *sql.Stmt, path string, buf []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for chunk := 0; ; chunk++ {
		n, err := io.ReadFull(f, buf)
		if n > 0 {
			if _, err := ins.ExecContext(ctx, filepath.Base(path), chunk, buf[:n]); err != nil {
				return err
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// seekRows advances dec to the first element of the "rows" array.
func seekRows(dec *json.Decoder) error {
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if tok == "rows" {
			_, err := dec.Token() // [
			return err
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return fmt.Errorf("no rows in the _all_docs answer")
}

// pushLimit measures sending the dataset directly with _bulk_docs
// new_edits=false in large batches into a fresh database.
type pushLimit struct {
	Seconds   float64 `json:"seconds"`
	Requests  int     `json:"requests"`
	BytesSent int64   `json:"bytes_sent"`
	// ServerCPUSeconds is the server's CPU time during the sending.
	ServerCPUSeconds float64 `json:"server_cpu_seconds,omitempty"`
}

func measurePushLimit(ctx context.Context, ds *Dataset, dbURL string) (*pushLimit, error) {
	if err := createDB(ctx, dbURL); err != nil {
		return nil, err
	}
	res, err := loadDataset(ctx, ds, dbURL)
	if err != nil {
		return nil, err
	}
	return &pushLimit{Seconds: res.SendTime.Seconds(), Requests: res.Requests, BytesSent: res.BytesSent}, nil
}
