package main

import (
	"bytes"
	"net/http"
	"path/filepath"
	"testing"
)

// A lazy pull leaves an attachment body behind; fetch-attachment brings
// it, --evict drops it again.
func TestLazyPullAndFetchAttachment(t *testing.T) {
	dir := t.TempDir()
	root := serveBinary(t, filepath.Join(dir, "hub.db"), nil)
	dbURL := root + "/hub"
	body := bytes.Repeat([]byte("photo bytes "), 20000)
	req, _ := http.NewRequest("PUT", dbURL+"/doc/photo.jpg", bytes.NewReader(body))
	req.Header.Set("Content-Type", "image/jpeg")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("put attachment: %v %v", resp, err)
	}
	resp.Body.Close()
	local := filepath.Join(dir, "local.db")
	ok(t, "pull", "--attachments", "lazy", local, dbURL)
	var st struct {
		ID         string `json:"id"`
		Length     int64  `json:"length"`
		Downloaded bool   `json:"downloaded"`
	}
	var info struct {
		Counts struct {
			NotDownloaded int64 `json:"attachments_not_downloaded"`
			Bytes         int64 `json:"attachment_bytes_not_downloaded"`
		} `json:"counts"`
	}
	mustJSON(t, ok(t, "info", local), &info)
	if info.Counts.NotDownloaded != 1 || info.Counts.Bytes != int64(len(body)) {
		t.Fatalf("info after a lazy pull: %+v", info)
	}
	// The hint names the database the store pulled from.
	failsWith(t, cli(t, nil, "attachment", "get", local, "doc", "photo.jpg"), exitNotFound,
		"settee fetch-attachment "+local+" "+dbURL+" doc photo.jpg")
	mustJSON(t, ok(t, "fetch-attachment", local, dbURL, "doc", "photo.jpg"), &st)
	if st.ID != "doc" || st.Length != int64(len(body)) || !st.Downloaded {
		t.Fatalf("after fetch: %+v", st)
	}
	mustJSON(t, ok(t, "fetch-attachment", "--evict", local, "doc", "photo.jpg"), &st)
	if st.Downloaded || st.Length != int64(len(body)) {
		t.Fatalf("after evict: %+v", st)
	}
	r := cli(t, nil, "push", "--attachments", "lazy", local, dbURL)
	failsWith(t, r, exitUsage, "--attachments")
	r = cli(t, nil, "pull", "--attachments", "sometimes", local, dbURL)
	failsWith(t, r, exitUsage, "lazy-over=BYTES")
	r = cli(t, nil, "fetch-attachment", local, "doc", "photo.jpg")
	failsWith(t, r, exitUsage, "--evict")
}
