package server

import (
	"errors"
	"net/http"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/server/access"
)

// serveSecurity is /{db}/_security: members read it, db admins write it.
func (s *Server) serveSecurity(w http.ResponseWriter, r *http.Request, c *call) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		sec, err := s.security(r.Context(), c.rt.db, c.db)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		c.sec = sec
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "must-revalidate")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(append(append([]byte(nil), c.sec.Raw...), '\n'))
	case http.MethodPut:
		if c.rt.db == access.UsersDB {
			s.writeError(w, r, couchdoc.Errorf(couchdoc.ErrForbidden, "You can't edit the security object of the user database."))
			return
		}
		b, err := readBody(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		sec, err := access.ParseSecurity(b)
		if err != nil {
			if errors.Is(err, access.ErrBadSecurity) {
				err = badRequest("%s", err.Error())
			}
			s.writeError(w, r, err)
			return
		}
		if err := s.setSecurity(r.Context(), c.db, sec); err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, okTrue)
	default:
		s.writeError(w, r, methodNotAllowed("GET,PUT"))
	}
}
