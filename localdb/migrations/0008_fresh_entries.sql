-- Schema version 8: new index entries go to a small second B-tree,
-- mango_fresh, merged into mango_entries in key order once it has grown
-- (see localdb/index_fresh.go). A query reads both.
CREATE TABLE mango_fresh (
	ix_id   INTEGER NOT NULL,
	key     BLOB    NOT NULL,
	rev_row INTEGER NOT NULL,
	PRIMARY KEY (ix_id, key)
) WITHOUT ROWID;
-- mango_fresh_rows counts the rows inserted into mango_fresh since its last
-- merge (deletes are not subtracted: it only decides when to merge).
INSERT INTO meta (key, value) VALUES ('mango_fresh_rows', '0');
