// Package attachstore keeps attachment content in the store's SQLite file:
// bytes stored once per md5 digest (att_content), in chunks of ChunkSize
// with a CRC-32C each (att_chunks), written inside a write transaction of
// package localdb through its small interface (Tx), staged before it when
// they stream in (Stage, UseStaged), and read back chunk by chunk, each
// checked against its CRC (Reader, ReadAll). Which revision names which
// content (rev_atts), stubs and lazy attachments are localdb's; this
// package never imports it.
package attachstore
