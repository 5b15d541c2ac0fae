package main

import (
	"context"
	"encoding/json"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// lazySourceID is the local (never replicated) document where a lazy pull
// notes the database it pulled from, so that the hint for a body left
// behind names the URL to fetch it from.
const lazySourceID = couchdoc.LocalPrefix + "settee-lazy-source"

// recordLazySource notes rem (its URL, without credentials) as the
// database lazy bodies are fetched from.
func recordLazySource(ctx context.Context, db *localdb.DB, rem *remote) error {
	body, err := json.Marshal(map[string]string{"url": rem.String()})
	if err != nil {
		return err
	}
	_, err = db.SetLocal(ctx, &couchdoc.Doc{ID: lazySourceID, Body: body}, 0)
	return err
}

// lazySource is the URL the store last pulled lazily from, or "URL" when
// it does not know.
func lazySource(ctx context.Context, db *localdb.DB) string {
	doc, err := db.GetLocal(ctx, lazySourceID)
	if err != nil {
		return "URL"
	}
	var v struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(doc.Body, &v) != nil || v.URL == "" {
		return "URL"
	}
	return v.URL
}
