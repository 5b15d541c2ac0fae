package scheduler

import (
	"errors"
	"net/url"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// FuzzParseSpec: any body is taken or refused with a CouchDB error
// (never a panic); a spec taken has http(s) endpoints whose display
// carries no credentials.
func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{
		`{"source":"http://a:b@h/x","target":{"url":"https://h/y","auth":{"basic":{"username":"u","password":"p"}}},"continuous":true}`,
		`{"source":"x","target":"y"}`, `{"source":{"url":1},"target":"http://h/y"}`, `[]`, `{}`, `null`,
		`{"source":"http://h/x","target":"http://h/y","selector":{},"doc_ids":["a"]}`,
		`{"source":"http://h/x","target":"http://h/y","filter":"d/f","query_params":{"a":1,"b":"c"},"worker_batch_size":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sp, err := ParseSpec(body)
		if err != nil {
			var ce *couchdoc.Error
			if !errors.As(err, &ce) || ce.Status != 403 && ce.Status != 400 {
				t.Fatalf("refusal %v is not CouchDB's", err)
			}
			return
		}
		for _, e := range []Endpoint{sp.Source, sp.Target} {
			u, err := url.Parse(e.URL)
			if err != nil || u.Scheme != "http" && u.Scheme != "https" {
				t.Fatalf("endpoint %q taken", e.URL)
			}
			if d, err := url.Parse(e.Display()); err != nil || d.User != nil {
				t.Fatalf("display %q of %q shows credentials", e.Display(), e.URL)
			}
		}
	})
}

// TestParseSpecFields: what a document says reaches the job's options.
func TestParseSpecFields(t *testing.T) {
	sp, err := ParseSpec([]byte(`{"source":{"url":"http://h/x","headers":{"X-A":"1"},"auth":{"session":{"username":"u","password":"p"}}},
		"target":"https://a:b@h/y/","continuous":true,"create_target":true,"filter":"d/f","query_params":{"n":2},
		"since_seq":"5-x","checkpoint_interval":1000,"worker_batch_size":50,"owner":"ann","_replication_state":"completed"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !sp.Source.Session || sp.Source.Username != "u" || sp.Source.Headers["X-A"] != "1" || !sp.Continuous || !sp.CreateTarget ||
		sp.Filter != "d/f" || sp.QueryParams["n"] != "2" || string(sp.SinceSeq) != `"5-x"` || sp.CheckpointInterval != 1000 ||
		sp.WorkerBatchSize != 50 || sp.Owner != "ann" || sp.State != "completed" {
		t.Errorf("spec %+v", sp)
	}
	if d := sp.Target.Display(); d != "https://h/y/" {
		t.Errorf("target shown as %q", d)
	}
	if d := sp.Source.Display(); d != "http://h/x/" {
		t.Errorf("source shown as %q", d)
	}
}
