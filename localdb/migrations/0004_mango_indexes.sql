-- Schema version 4: Mango json indexes (see localdb/index.go).

-- mango_indexes has one row per json index, that is per view of a design
-- document whose language is "query"; view is that view's JSON.
CREATE TABLE IF NOT EXISTS mango_indexes (
	ix_id INTEGER PRIMARY KEY,
	ddoc  TEXT NOT NULL,
	name  TEXT NOT NULL,
	view  BLOB NOT NULL,
	UNIQUE (ddoc, name)
);

-- mango_entries is the B-tree of each index: key is the memcomparable
-- encoding of the indexed fields' values (mango.EncodeKey), a 00 byte and
-- the document id's bytes, so rows sort in CouchDB collation order, ties by
-- id. A document's entries are found again from its winner's body, so no
-- index by doc_id is kept.
CREATE TABLE IF NOT EXISTS mango_entries (
	ix_id  INTEGER NOT NULL, -- mango_indexes.ix_id (no foreign key: checking one per entry costs writes)
	key    BLOB    NOT NULL,
	doc_id INTEGER NOT NULL,
	PRIMARY KEY (ix_id, key)
) WITHOUT ROWID;
