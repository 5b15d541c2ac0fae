package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// The lazy phase (-phases lazy) measures what lazy attachments save on
// the attachment set: -lazy-docs documents (default 10,000), one
// in every docs/atts carrying one attachment of -lazy-att-size random
// bytes (default 100 documents x 100 KB). On each peer of -peers the set
// is loaded once, then pulled into a fresh local store eagerly and into
// another lazily (sync.Lazy), in this process, over a counting transport:
// bytes received are socket bytes (headers included), time is around
// sync.Replicate. Then -lazy-fetch of the bodies left behind are fetched
// on demand (localpeer.FetchAttachment) from the lazy store.

// LazyRun is one peer's lazy vs eager pull of the attachment set.
type LazyRun struct {
	Peer            string   `json:"peer"`
	Docs            int      `json:"docs"`
	Attachments     int      `json:"attachments"`
	AttachmentBytes int64    `json:"attachment_bytes"`
	Eager           *lazyRep `json:"eager"`
	Lazy            *lazyRep `json:"lazy"`
	// BytesRatio and SecondsRatio are lazy / eager, from this run.
	BytesRatio   float64 `json:"bytes_ratio"`
	SecondsRatio float64 `json:"seconds_ratio"`
	// Fetch is the on-demand download of some bodies after the lazy pull.
	Fetch *lazyFetch `json:"fetch,omitempty"`
	// Rounds is how many times each pull ran; Eager and Lazy are the
	// median rounds by time.
	Rounds int `json:"rounds"`
}

// medianRep is the pull of median time (the lower one of an even count).
func medianRep(reps []*lazyRep) *lazyRep {
	s := slices.Clone(reps)
	slices.SortFunc(s, func(a, b *lazyRep) int { return cmp.Compare(a.Seconds, b.Seconds) })
	return s[(len(s)-1)/2]
}

// lazyRep is one pull of the set.
type lazyRep struct {
	Seconds       float64 `json:"seconds"`
	Requests      int64   `json:"requests"`
	BytesReceived int64   `json:"bytes_received"`
	BytesSent     int64   `json:"bytes_sent"`
	DocsWritten   int64   `json:"docs_written"`
	// Downloaded counts the attachments whose bytes the store holds after
	// the pull.
	Downloaded int `json:"attachments_downloaded"`
}

// lazyFetch is FetchAttachment of N bodies, one after the other.
type lazyFetch struct {
	N             int     `json:"n"`
	Seconds       float64 `json:"seconds"`
	MsPerFetch    float64 `json:"ms_per_fetch"`
	Requests      int64   `json:"requests"`
	BytesReceived int64   `json:"bytes_received"`
}

// lazySet is the generated attachment set.
type lazySet struct {
	docs, atts int
	size       int64
	seed       uint64
}

func (s lazySet) every() int { return max(1, s.docs/max(1, s.atts)) }

// hasAtt reports whether document i carries an attachment.
func (s lazySet) hasAtt(i int) bool { return i%s.every() == 0 && i/s.every() < s.atts }

func (s lazySet) id(i int) string { return fmt.Sprintf("lazy-%06d", i) }

// attBytes is document i's attachment: random, so gzip gains nothing.
func (s lazySet) attBytes(i int) []byte {
	r := rand.New(rand.NewChaCha8(seed32(s.seed, uint64(i))))
	b := make([]byte, s.size)
	for j := 0; j < len(b); j += 8 {
		v := r.Uint64()
		for k := 0; k < 8 && j+k < len(b); k++ {
			b[j+k] = byte(v >> (8 * k))
		}
	}
	return b
}

func seed32(seed, i uint64) [32]byte {
	var s [32]byte
	for k := 0; k < 8; k++ {
		s[k] = byte(seed >> (8 * k))
		s[8+k] = byte(i >> (8 * k))
	}
	s[16] = 'L'
	return s
}

// load writes the set into dbURL with _bulk_docs (new_edits=true).
func (s lazySet) load(ctx context.Context, dbURL string) error {
	r := rand.New(rand.NewPCG(s.seed, 17))
	var buf bytes.Buffer
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		buf.WriteString("]}")
		err := postBulk(ctx, dbURL, buf.Bytes())
		buf.Reset()
		n = 0
		return err
	}
	for i := 0; i < s.docs; i++ {
		if n == 0 {
			buf.WriteString(`{"docs":[`)
		} else {
			buf.WriteByte(',')
		}
		body := genBody(r, i)
		fmt.Fprintf(&buf, `{"_id":%q,`, s.id(i))
		if s.hasAtt(i) {
			fmt.Fprintf(&buf, `"_attachments":{"photo.jpg":{"content_type":"image/jpeg","data":"%s"}},`, base64.StdEncoding.EncodeToString(s.attBytes(i)))
		}
		buf.Write(body[1:])
		n++
		if n == 500 || buf.Len() > 8<<20 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// lazyPhase runs the lazy vs eager comparison against every peer.
func (b *bench) lazyPhase(ctx context.Context, peers []hubServer) error {
	cfg := b.cfg
	set := lazySet{docs: cfg.LazyDocs, atts: min(cfg.LazyAtts, cfg.LazyDocs), size: cfg.LazyAttSize, seed: cfg.Seed}
	for _, p := range peers {
		what := "lazy via " + p.name
		dbURL := p.url + "/bench-lazy"
		if err := createDB(ctx, dbURL); err != nil {
			b.fail(what, err)
			continue
		}
		b.logf("%s: loading %d docs, %d with a %d-byte attachment", what, set.docs, set.atts, set.size)
		if err := set.load(ctx, dbURL); err != nil {
			b.fail(what+": load", err)
			continue
		}
		run := &LazyRun{Peer: p.name, Docs: set.docs, Attachments: set.atts, AttachmentBytes: int64(set.atts) * set.size}
		dir := filepath.Join(b.dir, "lazy-"+filepath.Base(p.url))
		_ = os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		var eager, lazy []*lazyRep
		var err error
		// Each round pulls eagerly, then lazily, into fresh stores; the
		// median round of each counts (the machine's load varies). The
		// bodies left behind by the last lazy pull are then fetched.
		for round := 0; round < cfg.LazyRounds && err == nil; round++ {
			var e, l *lazyRep
			e, err = b.lazyPull(ctx, set, dbURL, filepath.Join(dir, fmt.Sprintf("eager-%d.db", round)), sync.Eager, nil)
			if err != nil {
				err = fmt.Errorf("eager pull: %w", err)
				break
			}
			var after func(*localdb.DB) error
			if round == cfg.LazyRounds-1 {
				after = func(db *localdb.DB) (ferr error) {
					run.Fetch, ferr = fetchSome(ctx, set, dbURL, db, cfg.LazyFetch)
					return ferr
				}
			}
			l, err = b.lazyPull(ctx, set, dbURL, filepath.Join(dir, fmt.Sprintf("lazy-%d.db", round)), sync.Lazy, after)
			if err != nil {
				err = fmt.Errorf("lazy pull: %w", err)
				break
			}
			eager, lazy = append(eager, e), append(lazy, l)
		}
		if err != nil {
			b.fail(what, err)
			continue
		}
		run.Rounds = cfg.LazyRounds
		run.Eager, run.Lazy = medianRep(eager), medianRep(lazy)
		run.BytesRatio = ratio(float64(run.Lazy.BytesReceived), float64(run.Eager.BytesReceived))
		run.SecondsRatio = ratio(run.Lazy.Seconds, run.Eager.Seconds)
		b.res.Lazy = append(b.res.Lazy, run)
		b.logf("%s: eager %.2fs %.1f MB received, lazy %.2fs %.2f MB received (bytes %.3fx, time %.2fx)",
			what, run.Eager.Seconds, mb(run.Eager.BytesReceived), run.Lazy.Seconds, mb(run.Lazy.BytesReceived), run.BytesRatio, run.SecondsRatio)
		if f := run.Fetch; f != nil {
			b.logf("%s: fetched %d bodies on demand in %.2fs (%.1f ms each), %.2f MB received", what, f.N, f.Seconds, f.MsPerFetch, mb(f.BytesReceived))
		}
		ok := true
		for i := range eager {
			switch {
			case eager[i].Downloaded != set.atts:
				b.fail(what, fmt.Errorf("eager pull %d: %d of %d attachment bodies stored", i, eager[i].Downloaded, set.atts))
			case lazy[i].Downloaded != 0:
				b.fail(what, fmt.Errorf("lazy pull %d: %d attachment bodies stored, want none", i, lazy[i].Downloaded))
			case lazy[i].BytesReceived >= eager[i].BytesReceived:
				b.fail(what, fmt.Errorf("lazy pull %d received %d bytes, eager %d", i, lazy[i].BytesReceived, eager[i].BytesReceived))
			default:
				continue
			}
			ok = false
		}
		if ok {
			b.check(fmt.Sprintf("%s: in %d rounds, eager stored all %d bodies, lazy none, %d documents each; %d fetched on demand with their bytes", what, len(eager), set.atts, set.docs, cfg.LazyFetch))
		}
		if !cfg.Keep {
			_ = deleteDB(context.Background(), dbURL)
		}
	}
	return ctx.Err()
}

// lazyPull pulls dbURL into a new store at path with att, checks the
// store and counts the attachment bodies it holds; then runs after on it.
func (b *bench) lazyPull(ctx context.Context, set lazySet, dbURL, path string, att sync.Attachments, after func(*localdb.DB) error) (*lazyRep, error) {
	defer func() { // after Close: the rounds would pile up their stores
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(path + suffix)
		}
	}()
	db, err := localdb.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cnt := &counter{}
	rp, err := couch.New(dbURL, &couch.Options{Transport: cnt.transport()})
	if err != nil {
		return nil, err
	}
	b.logf("pull %s of %d docs from %s", att, set.docs, redact(dbURL))
	start := time.Now()
	res, err := sync.Replicate(ctx, sync.Options{Source: rp, Target: localpeer.New(db), Attachments: att})
	secs := time.Since(start).Seconds()
	if err != nil {
		return nil, err
	}
	rep := &lazyRep{Seconds: secs, Requests: cnt.requests.Load(), BytesReceived: cnt.recv.Load(), BytesSent: cnt.sent.Load(), DocsWritten: res.Stats.DocsWritten}
	info, err := db.Info(ctx)
	if err != nil {
		return nil, err
	}
	if info.DocCount != int64(set.docs) || res.Stats.DocWriteFailures > 0 {
		return nil, fmt.Errorf("doc_count %d, want %d (%d write failures)", info.DocCount, set.docs, res.Stats.DocWriteFailures)
	}
	for i := 0; i < set.docs; i++ {
		if !set.hasAtt(i) {
			continue
		}
		st, err := db.Attachment(ctx, set.id(i), "photo.jpg")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", set.id(i), err)
		}
		if st.Downloaded {
			rep.Downloaded++
		}
	}
	if after != nil {
		if err := after(db); err != nil {
			return nil, err
		}
	}
	return rep, db.CheckInvariants(ctx)
}

// fetchSome downloads n of the bodies a lazy pull left behind, one after
// the other, and checks their bytes against the generated ones.
func fetchSome(ctx context.Context, set lazySet, dbURL string, db *localdb.DB, n int) (*lazyFetch, error) {
	n = min(n, set.atts)
	if n <= 0 {
		return nil, nil
	}
	cnt := &counter{}
	rp, err := couch.New(dbURL, &couch.Options{Transport: cnt.transport()})
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := 0; i < set.docs && len(ids) < n; i++ {
		if set.hasAtt(i) {
			ids = append(ids, set.id(i))
		}
	}
	start := time.Now()
	for _, id := range ids {
		if err := localpeer.FetchAttachment(ctx, rp, db, id, "photo.jpg"); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", id, err)
		}
	}
	f := &lazyFetch{N: n, Seconds: time.Since(start).Seconds(), Requests: cnt.requests.Load(), BytesReceived: cnt.recv.Load()}
	f.MsPerFetch = 1000 * f.Seconds / float64(n)
	for k, id := range ids {
		_, rc, err := db.OpenAttachment(ctx, id, "", "photo.jpg")
		if err != nil {
			return nil, fmt.Errorf("%s after fetch: %w", id, err)
		}
		h := md5.New()
		_, err = io.Copy(h, rc)
		rc.Close()
		if want := md5.Sum(set.attBytes(k * set.every())); err != nil || !bytes.Equal(h.Sum(nil), want[:]) {
			return nil, fmt.Errorf("%s after fetch: bytes differ from the generated ones (%v)", id, err)
		}
	}
	return f, nil
}
