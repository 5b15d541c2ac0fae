-- Schema version 5: lazy attachments, known by their metadata while their
-- bytes are not stored (see localdb/lazy.go).

-- present is 0 for content known only by its digest and length: it has no
-- att_chunks rows. Every rev_atts row naming it then has missing = 1.
ALTER TABLE att_content ADD COLUMN present INTEGER NOT NULL DEFAULT 1;

-- missing is 1 for an attachment of a revision that does not hold its
-- bytes (replicated lazily, or evicted); its content may still be present
-- when another revision holds the same digest. encoding is the source's
-- storage encoding ("gzip": the digest is over the gzip bytes), kept until
-- the bytes are downloaded.
ALTER TABLE rev_atts ADD COLUMN missing INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rev_atts ADD COLUMN encoding TEXT NOT NULL DEFAULT '';

-- external_bytes counts only the attachment content the store holds.
DROP TRIGGER att_bytes_insert;
DROP TRIGGER att_bytes_delete;
CREATE TRIGGER att_bytes_insert AFTER INSERT ON att_content BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) + NEW.length * NEW.present WHERE key = 'external_bytes';
END;
CREATE TRIGGER att_bytes_delete AFTER DELETE ON att_content BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) - OLD.length * OLD.present WHERE key = 'external_bytes';
END;
CREATE TRIGGER att_bytes_update AFTER UPDATE OF present, length ON att_content BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) - OLD.length * OLD.present + NEW.length * NEW.present WHERE key = 'external_bytes';
END;
