package localdb

// bumpSeq advances the update sequence without a document moving, as
// CouchDB does for a change of a database setting (revs_limit,
// purged_infos_limit):
// indexers and feed readers see that something changed. The floor keeps
// the sequence where it is once no document sits at it.
func (w *wtx) bumpSeq() error {
	w.seq++
	w.fed = true
	return w.saveSeqFloor()
}

// saveSeqFloor records the transaction's sequence as the least update
// sequence the store reports from now on.
func (w *wtx) saveSeqFloor() error {
	_, err := w.tx.ExecContext(w.ctx, "UPDATE meta SET value = ? WHERE key = 'seq_floor'", w.seq)
	return err
}
