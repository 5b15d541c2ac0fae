-- Schema version 7: index entries name the winning revision's row, so a
-- query reads each document's body with one lookup (see localdb/index.go).

-- Open rebuilds the indexes of a file without mango_key_version: the
-- entries are made again, each with the rev_row of its document's winner.
DROP TABLE mango_entries;
CREATE TABLE mango_entries (
	ix_id   INTEGER NOT NULL, -- mango_indexes.ix_id (no foreign key: checking one per entry costs writes)
	key     BLOB    NOT NULL,
	rev_row INTEGER NOT NULL, -- revs.rev_row of the document's winner
	PRIMARY KEY (ix_id, key)
) WITHOUT ROWID;
DELETE FROM meta WHERE key = 'mango_key_version';
