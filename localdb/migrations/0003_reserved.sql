-- Schema version 3 belongs to another branch; this placeholder keeps the
-- numbering 1..n on branch h15 and is to be dropped when the branches merge.
SELECT 1;
