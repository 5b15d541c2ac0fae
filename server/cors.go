package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	corsMethods = "GET, HEAD, POST, PUT, DELETE, COPY"
	corsHeaders = "accept, authorization, content-type, origin, referer, x-csrf-token, x-requested-with"
	corsExpose  = "content-type, cache-control, accept-ranges, etag, server, x-couch-request-id, x-couch-update-newrev, x-couchdb-body-time"
)

// cors adds CORS headers for an allowed Origin and answers preflight
// requests; it returns true when the request has been answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	c := s.cfg.CORS
	origin := r.Header.Get("Origin")
	if c == nil || origin == "" {
		return false
	}
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	h := w.Header()
	h.Add("Vary", "Origin")
	allowed, any := false, false
	for _, o := range c.Origins {
		if o == "*" {
			any = true
		}
		if o == "*" || strings.EqualFold(o, origin) {
			allowed = true
		}
	}
	if !allowed {
		if preflight {
			w.WriteHeader(http.StatusNoContent)
			return true
		}
		return false
	}
	if any && !c.Credentials {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
	}
	if c.Credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if !preflight {
		h.Set("Access-Control-Expose-Headers", corsExpose)
		return false
	}
	h.Set("Access-Control-Allow-Methods", corsMethods)
	allowHeaders := corsHeaders
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		allowHeaders = mergeHeaderList(corsHeaders, req)
	}
	h.Set("Access-Control-Allow-Headers", allowHeaders)
	maxAge := c.MaxAge
	if maxAge <= 0 {
		maxAge = 10 * time.Minute
	}
	h.Set("Access-Control-Max-Age", strconv.Itoa(int(maxAge/time.Second)))
	w.WriteHeader(http.StatusNoContent)
	return true
}

// mergeHeaderList keeps the requested headers that are in the allowed list.
func mergeHeaderList(allowed, requested string) string {
	ok := map[string]bool{}
	for _, a := range strings.Split(allowed, ",") {
		ok[strings.TrimSpace(a)] = true
	}
	var out []string
	for _, h := range strings.Split(requested, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if ok[h] {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return allowed
	}
	return strings.Join(out, ", ")
}
