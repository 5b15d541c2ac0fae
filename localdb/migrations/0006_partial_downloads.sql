-- Schema version 6: attachment downloads kept across restarts (see
-- localdb/partial.go).

-- att_partial is an interrupted download of content the store knows but
-- lacks (att_content.present = 0): its first length bytes, whole chunks,
-- are stored as att_chunks rows under key, and hash is the md5 state over
-- them (Go's encoding.BinaryMarshaler form), so the download goes on from
-- byte length and the digest is checked over all the bytes at the end.
CREATE TABLE att_partial (
	digest TEXT PRIMARY KEY,
	key    TEXT    NOT NULL UNIQUE,
	length INTEGER NOT NULL,
	hash   BLOB    NOT NULL
) WITHOUT ROWID;
