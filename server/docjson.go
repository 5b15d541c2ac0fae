package server

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"sort"

	"github.com/settee/settee/couchdoc"
)

// writeDocJSON writes a document as JSON with attachment bodies inline as
// base64, streaming each Body through the encoder so that a large
// attachment is never held whole in memory.
func writeDocJSON(w io.Writer, doc *couchdoc.Doc) error {
	if !hasBodies(doc) {
		b, err := doc.MarshalJSON()
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	cp := *doc
	cp.Attachments = nil
	head, err := cp.MarshalJSON()
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.Write(head[:len(head)-1]) // without the closing brace
	if len(head) > 2 {
		bw.WriteByte(',')
	}
	bw.WriteString(`"_attachments":{`)
	names := make([]string, 0, len(doc.Attachments))
	for name := range doc.Attachments {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		a := doc.Attachments[name]
		if i > 0 {
			bw.WriteByte(',')
		}
		writeJSONString(bw, name)
		// CouchDB's order of the members.
		bw.WriteString(`:{"content_type":`)
		writeJSONString(bw, a.ContentType)
		bw.WriteString(`,"revpos":`)
		writeJSONValue(bw, a.RevPos)
		bw.WriteString(`,"digest":`)
		writeJSONString(bw, a.Digest)
		switch {
		case a.Stub:
			// Stubs carry their length; inline data does not, as in CouchDB.
			bw.WriteString(`,"length":`)
			writeJSONValue(bw, a.Length)
			bw.WriteString(`,"stub":true}`)
			continue
		case a.Body != nil:
			bw.WriteString(`,"data":"`)
			enc := base64.NewEncoder(base64.StdEncoding, bw)
			if _, err := io.Copy(enc, a.Body); err != nil {
				return err
			}
			if err := enc.Close(); err != nil {
				return err
			}
			bw.WriteString(`"}`)
		default:
			bw.WriteString(`,"data":"`)
			bw.WriteString(base64.StdEncoding.EncodeToString(a.Data))
			bw.WriteString(`"}`)
		}
	}
	bw.WriteString("}}")
	return bw.Flush()
}

// hasBodies reports whether a document carries attachment bytes.
func hasBodies(doc *couchdoc.Doc) bool {
	for _, a := range doc.Attachments {
		if !a.Stub && (a.Body != nil || a.Data != nil) {
			return true
		}
	}
	return false
}

// closeBodies closes attachment bodies that are closers.
func closeBodies(doc *couchdoc.Doc) {
	if doc == nil {
		return
	}
	for _, a := range doc.Attachments {
		if c, ok := a.Body.(io.Closer); ok {
			c.Close()
		}
	}
}

func writeJSONString(w *bufio.Writer, s string) {
	b, _ := json.Marshal(s)
	w.Write(b)
}

func writeJSONValue(w *bufio.Writer, v any) {
	b, _ := json.Marshal(v)
	w.Write(b)
}
