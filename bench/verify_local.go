package main

import (
	"context"
	"fmt"

	"github.com/settee/settee/localdb"
)

// verifyLocal checks that the local store at path holds the source's
// documents: the same winners, the dataset's counts and conflicts, and
// the store's own invariants.
func verifyLocal(ctx context.Context, path, srcURL string, ds *Dataset, want *DatasetStats) error {
	db, err := localdb.Open(path, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	info, err := db.Info(ctx)
	if err != nil {
		return err
	}
	if info.DocCount != int64(want.Live) || info.DocDelCount != int64(want.Deleted) {
		return fmt.Errorf("doc_count %d, doc_del_count %d; want %d, %d", info.DocCount, info.DocDelCount, want.Live, want.Deleted)
	}
	var got []idRev
	if _, err := db.AllDocs(ctx, localdb.AllDocsOptions{}, func(row *localdb.AllDocsRow) error {
		if !row.Deleted && row.Error == "" {
			got = append(got, idRev{row.ID, row.Rev})
		}
		return nil
	}); err != nil {
		return err
	}
	remote, err := remoteWinners(ctx, srcURL)
	if err != nil {
		return err
	}
	if err := diffWinners(remote, got); err != nil {
		return err
	}
	conflicts := 0
	if err := db.Conflicts(ctx, func(string) error { conflicts++; return nil }); err != nil {
		return err
	}
	if conflicts != want.Conflicted {
		return fmt.Errorf("%d conflicted documents, want %d", conflicts, want.Conflicted)
	}
	for i := 0; i < ds.Count(); i++ {
		if !ds.hasAttachment(i) {
			continue
		}
		g := ds.Doc(i)
		_, rc, err := db.OpenAttachment(ctx, g.ID, "", g.Att.Name)
		if err != nil {
			return fmt.Errorf("attachment %s/%s: %w", g.ID, g.Att.Name, err)
		}
		err = sameBytes(rc, g.Att)
		rc.Close()
		if err != nil {
			return fmt.Errorf("attachment %s/%s: %w", g.ID, g.Att.Name, err)
		}
	}
	return db.CheckInvariants(ctx)
}
