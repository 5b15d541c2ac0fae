-- Settee local store, schema version 1.

-- meta holds per-database settings: uuid, revs_limit.
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

-- docs has one row per document: its whole revision tree (revtree encoding),
-- its winning revision and its place in the changes feed.
CREATE TABLE docs (
	doc_id     INTEGER PRIMARY KEY,
	id         TEXT    NOT NULL UNIQUE,
	seq        INTEGER NOT NULL UNIQUE,
	winner     TEXT    NOT NULL,
	deleted    INTEGER NOT NULL,
	conflicted INTEGER NOT NULL,
	tree       BLOB    NOT NULL
);
CREATE INDEX docs_conflicted ON docs (id) WHERE conflicted = 1;

-- revs holds the bodies of the revisions we have; revisions known only by
-- id live in docs.tree alone.
CREATE TABLE revs (
	rev_row  INTEGER PRIMARY KEY,
	doc_id   INTEGER NOT NULL REFERENCES docs (doc_id) ON DELETE CASCADE,
	rev      TEXT    NOT NULL,
	body     BLOB    NOT NULL,
	has_atts INTEGER NOT NULL DEFAULT 0,
	UNIQUE (doc_id, rev)
);

-- att_content is attachment content, stored once per digest, its bytes in
-- att_chunks rows.
CREATE TABLE att_content (
	digest TEXT PRIMARY KEY,
	length INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE att_chunks (
	digest TEXT    NOT NULL,
	idx    INTEGER NOT NULL,
	data   BLOB    NOT NULL,
	PRIMARY KEY (digest, idx)
);

-- rev_atts lists each revision's attachments.
CREATE TABLE rev_atts (
	rev_row      INTEGER NOT NULL REFERENCES revs (rev_row) ON DELETE CASCADE,
	name         TEXT    NOT NULL,
	digest       TEXT    NOT NULL REFERENCES att_content (digest),
	content_type TEXT    NOT NULL,
	length       INTEGER NOT NULL,
	revpos       INTEGER NOT NULL,
	PRIMARY KEY (rev_row, name)
) WITHOUT ROWID;
CREATE INDEX rev_atts_digest ON rev_atts (digest);

-- local_docs holds _local documents: never replicated, never in changes.
CREATE TABLE local_docs (
	id   TEXT PRIMARY KEY,
	rev  INTEGER NOT NULL,
	body BLOB    NOT NULL
) WITHOUT ROWID;
