package couchcorpus

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
)

type part struct {
	header textproto.MIMEHeader
	body   []byte
}

func readParts(contentType string, body []byte) ([]part, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, err
	}
	if params["boundary"] == "" {
		return nil, fmt.Errorf("no boundary in %q", contentType)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts []part
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return parts, err
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return parts, err
		}
		parts = append(parts, part{header: p.Header, body: b})
	}
}

// matchAttachmentParts orders have's attachment parts (those naming a
// filename) as want's: their order follows the order of the members of
// "_attachments", and JSON members have none.
func matchAttachmentParts(want, have []part) []part {
	out := append([]part(nil), have...)
	for i := range want {
		name := filename(want[i])
		if name == "" || i >= len(out) || filename(out[i]) == name {
			continue
		}
		for j := i + 1; j < len(out); j++ {
			if filename(out[j]) == name {
				out[i], out[j] = out[j], out[i]
				break
			}
		}
	}
	return out
}

func filename(p part) string {
	_, params, err := mime.ParseMediaType(p.header.Get("Content-Disposition"))
	if err != nil {
		return ""
	}
	return params["filename"]
}

// partHeaders must match in every part (Content-Type aside).
var partHeaders = []string{"Content-Disposition", "Content-Encoding", "X-Doc-Id", "X-Rev-Id"}

// multipart compares two multipart bodies part by part, recursing into
// nested multipart/related parts; boundaries and their quoting are framing.
func (c *comparer) multipart(where, wantCT, boundary string, want []byte, haveCT string, have []byte) {
	wp, err := readParts(wantCT, want)
	if err != nil {
		c.addf("%s: CouchDB's multipart unreadable: %v", where, err)
		return
	}
	hp, err := readParts(haveCT, have)
	if err != nil {
		c.addf("%s: multipart unreadable: %v (%.200q)", where, err, have)
		return
	}
	if len(wp) != len(hp) {
		c.addf("%s: %d parts, CouchDB %d", where, len(hp), len(wp))
	}
	hp = matchAttachmentParts(wp, hp)
	for i := 0; i < len(wp) && i < len(hp); i++ {
		pw := fmt.Sprintf("%s part %d", where, i)
		w, h := wp[i], hp[i]
		gz := strings.EqualFold(w.header.Get("Content-Encoding"), "gzip")
		for _, name := range partHeaders {
			if c.opts.IdentityAttachments && gz && name == "Content-Encoding" {
				continue
			}
			c.header(pw+" "+name, w.header.Get(name), h.header.Get(name))
		}
		wct, hct := w.header.Get("Content-Type"), h.header.Get("Content-Type")
		c.contentType(pw+" Content-Type", wct, hct)
		wb := w.body
		if c.opts.IdentityAttachments && gz {
			wb = gunzip(wb)
		}
		if wct == "" {
			wct = "application/octet-stream"
		}
		c.body(pw, wct, wb, hct, h.body, false)
	}
}
