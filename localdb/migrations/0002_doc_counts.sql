-- Schema version 2: document counts kept in meta, so Info does not scan.
INSERT INTO meta (key, value) SELECT 'doc_count', COUNT(*) FROM docs WHERE deleted = 0;
INSERT INTO meta (key, value) SELECT 'doc_del_count', COUNT(*) FROM docs WHERE deleted = 1;
