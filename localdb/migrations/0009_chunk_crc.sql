-- Schema version 9: each attachment chunk keeps the CRC-32C of its bytes
-- (see localdb/chunkcrc.go). Chunks stored before have none (NULL); their
-- readers fall back to the md5 of the whole content.
ALTER TABLE att_chunks ADD COLUMN crc INTEGER;
