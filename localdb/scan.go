package localdb

import "database/sql"

// scanAll reads a one-column result to the end and closes it: the ids a
// caller then works through without holding the query open.
func scanAll[T any](rows *sql.Rows) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
