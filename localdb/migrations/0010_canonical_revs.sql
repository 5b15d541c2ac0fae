-- Schema version 10: revision ids as CouchDB keeps them.

-- Rev ids are opaque (couchdoc.ParseRev follows CouchDB's parse_rev), and
-- the store keeps each in the form CouchDB answers it: a 32-digit hex id
-- in lower case, a 16-byte id as the hex of its bytes. The winner among
-- leaves of one generation follows CouchDB's order of ids. Files written
-- before may hold upper-case or 16-digit hex ids, and winners picked by
-- the ids' text: the Go step of this version (localdb/migrate_revs.go)
-- rewrites those documents' trees, bodies' revs and winners. The schema
-- itself does not change.
SELECT 1;
