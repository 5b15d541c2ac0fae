-- Schema version 9: attachment chunks.

-- Each chunk keeps the CRC-32C of its bytes (see localdb/chunkcrc.go).
-- Chunks stored before have none (NULL); their readers fall back to the
-- md5 of the whole content.
ALTER TABLE att_chunks ADD COLUMN crc INTEGER;

-- chunks names the key the content's chunks are stored under when it is
-- not the digest: a streamed body is staged under a temporary key (or a
-- download under its partial key) and keeps it, because renaming the
-- chunks rewrote every byte (see localdb/stage.go). NULL: the digest.
ALTER TABLE att_content ADD COLUMN chunks TEXT;
CREATE INDEX att_content_chunks ON att_content (chunks) WHERE chunks IS NOT NULL;
