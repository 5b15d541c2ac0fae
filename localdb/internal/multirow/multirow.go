// Package multirow builds the multi-row INSERT statements with which the
// store's writers write the rows they buffer: many rows per statement cost
// far less than one statement per row. Rows go Chunk at a time, then the
// rest as a few statements of power-of-two sizes, so every statement a
// write runs can be prepared when the database opens.
package multirow

import "strings"

// Chunk is how many rows one multi-row INSERT writes.
const Chunk = 100

// Query is head, then VALUES with rows groups of cols placeholders, then
// tail.
func Query(head string, cols, rows int, tail string) string {
	one := "(?" + strings.Repeat(", ?", cols-1) + ")"
	return head + " VALUES " + one + strings.Repeat(", "+one, rows-1) + tail
}

// Take is how many of rows (at least one) the next statement writes:
// Chunk, or the largest power of two not above rows when fewer are left.
func Take(rows int) int {
	if rows >= Chunk {
		return Chunk
	}
	n := 1
	for n*2 <= rows {
		n *= 2
	}
	return n
}
