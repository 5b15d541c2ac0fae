package wire

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// checkedBody is a body that says whether it checks its bytes itself.
type checkedBody struct {
	io.Reader
	checks bool
}

func (b checkedBody) VerifiesContent() bool { return b.checks }

// TestSelfVerifyingBody writes bytes that do not match their digest: a body
// that does not check itself is refused by the md5, one that does is
// trusted for its bytes (no md5 is summed) but still held to its length.
func TestSelfVerifyingBody(t *testing.T) {
	write := func(body io.Reader, length int64) error {
		doc := &couchdoc.Doc{ID: "d", Rev: "1-" + strings.Repeat("a", 32), Attachments: map[string]*couchdoc.Attachment{
			"a": {Body: body, Length: length, Digest: md5Digest([]byte("hello"))}}}
		rel, err := NewRelated(doc)
		if err != nil {
			t.Fatal(err)
		}
		_, err = rel.WriteTo(io.Discard)
		return err
	}
	if err := write(checkedBody{strings.NewReader("jello"), false}, 5); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("unchecked body with other bytes: %v, want ErrDigestMismatch", err)
	}
	if err := write(checkedBody{strings.NewReader("jello"), true}, 5); err != nil {
		t.Fatalf("self-checking body: %v", err)
	}
	if err := write(checkedBody{strings.NewReader("hell"), true}, 5); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("self-checking body one byte short: %v, want ErrDigestMismatch", err)
	}
}
