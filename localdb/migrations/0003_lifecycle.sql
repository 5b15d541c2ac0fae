-- Schema version 3: purge, as CouchDB 3 keeps it, and document expiry.

-- purged_infos records each purge request (one document and the revisions
-- asked for), numbered by purge_seq; only the newest purged_infos_limit are
-- kept.
CREATE TABLE purged_infos (
	purge_seq INTEGER PRIMARY KEY,
	id        TEXT    NOT NULL,
	revs      TEXT    NOT NULL -- JSON array of the revisions requested
);

-- purge_seq counts purge requests; purged_infos_limit is CouchDB's
-- _purged_infos_limit; seq_floor is the lowest the update sequence may be,
-- so purging the newest document never hands its sequence out again.
INSERT INTO meta (key, value) VALUES ('purge_seq', '0');
INSERT INTO meta (key, value) VALUES ('purged_infos_limit', '1000');
INSERT INTO meta (key, value) SELECT 'seq_floor', COALESCE(MAX(seq), 0) FROM docs;

-- expirations holds when documents expire (unix milliseconds): local to
-- this store, never replicated; expired documents are purged.
CREATE TABLE expirations (
	id TEXT    PRIMARY KEY,
	at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX expirations_at ON expirations (at);

-- external_bytes is the data as the application sees it (stored revision
-- bodies and attachment content), kept by triggers so GET /{db} need not
-- scan for its sizes.external. Cascading deletes fire them too.
INSERT INTO meta (key, value) SELECT 'external_bytes',
	(SELECT COALESCE(SUM(LENGTH(body)), 0) FROM revs) + (SELECT COALESCE(SUM(length), 0) FROM att_content);
CREATE TRIGGER revs_bytes_insert AFTER INSERT ON revs BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) + LENGTH(NEW.body) WHERE key = 'external_bytes';
END;
CREATE TRIGGER revs_bytes_delete AFTER DELETE ON revs BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) - LENGTH(OLD.body) WHERE key = 'external_bytes';
END;
CREATE TRIGGER att_bytes_insert AFTER INSERT ON att_content BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) + NEW.length WHERE key = 'external_bytes';
END;
CREATE TRIGGER att_bytes_delete AFTER DELETE ON att_content BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) - OLD.length WHERE key = 'external_bytes';
END;
