package server

import (
	"fmt"
	"path/filepath"
	"strings"
)

// NameOfFile makes a CouchDB database name of a store file's name: lower
// case, without its extension, every character CouchDB refuses made '_',
// starting with a letter ("My-Notes.db" is "my-notes", "shop list.db"
// "shop_list"). A directory's files whose names CouchDB refuses are
// served under this name, as a single store file is.
func NameOfFile(file string) string {
	base := strings.ToLower(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	var b strings.Builder
	for _, c := range base {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.ContainsRune("_$()+-", c):
			b.WriteRune(c)
		default:
			b.WriteRune('_')
		}
	}
	name := b.String()
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		name = "db" + name
	}
	return name
}

// FileNote says what became of a store file of the data directory whose
// name is not a CouchDB database name: served under another Name, or
// skipped (Name empty) for the Reason given.
type FileNote struct {
	File   string
	Name   string
	Reason string
}

func (n FileNote) String() string {
	if n.Name != "" {
		return fmt.Sprintf("%s is served as %s (%s)", n.File, n.Name, n.Reason)
	}
	return fmt.Sprintf("%s is skipped: %s", n.File, n.Reason)
}

// FileNotes lists the store files of the data directory served under
// another name or skipped, as of the last listing (Open, _all_dbs).
func (s *Server) FileNotes() []FileNote {
	s.dbs.mu.Lock()
	defer s.dbs.mu.Unlock()
	return append([]FileNote(nil), s.dbs.notes...)
}

// aliasFiles names the files whose names are not database names (files
// maps a file's name to its name without the extension), given the valid
// names already taken: each gets NameOfFile's name unless that is taken,
// and the notes say which. It returns the aliases (name to file).
func aliasFiles(files []string, taken map[string]bool) (map[string]string, []FileNote) {
	aliases := map[string]string{}
	var notes []FileNote
	for _, f := range files {
		n := NameOfFile(f)
		if taken[n] {
			notes = append(notes, FileNote{File: f, Reason: fmt.Sprintf("its name as a database, %s, is another file's", n)})
			continue
		}
		taken[n] = true
		aliases[n] = f
		notes = append(notes, FileNote{File: f, Name: n, Reason: "CouchDB's names are lower case letters, digits and _$()+-/, starting with a letter"})
	}
	return aliases, notes
}
