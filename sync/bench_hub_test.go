package sync_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/settee/settee/server"
	"github.com/settee/settee/server/servertest"
)

// hubDBs is a hub whose admin makes each database, open to the _users
// member nina; the URL carries the credentials of user (the admin or
// nina). The password cache is warmed before the timer runs: a client
// pays one PBKDF2 run per credentials, not one per request.
func hubDBs(b *testing.B, user, pass string) newDBFunc {
	srv := servertest.Start(b, &server.Config{Users: map[string]string{"admin": "admin-pw"}})
	admin := strings.Replace(srv.URL, "http://", "http://admin:admin-pw@", 1)
	hubDo(b, "PUT", admin+"/_users/org.couchdb.user:nina", `{"name":"nina","password":"nina-pw","roles":["field"],"type":"user"}`, 201)
	as := strings.Replace(srv.URL, "http://", "http://"+user+":"+pass+"@", 1)
	return func(b *testing.B, name string) string {
		hubDo(b, "PUT", admin+"/"+name, "", 201)
		hubDo(b, "PUT", admin+"/"+name+"/_security", `{"members":{"roles":["field"]}}`, 200)
		hubDo(b, "GET", as+"/"+name, "", 200)
		return as + "/" + name
	}
}

func hubDo(b *testing.B, method, u, body string, want int) {
	b.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != want {
		b.Fatalf("%s %s: %d, want %d", method, u, res.StatusCode, want)
	}
}

// BenchmarkHub10k pulls and pushes benchDocs documents through a hub with
// users, as its server admin and as a _users member, both with basic
// auth: the member's docs/s is the cost of per-database security.
func BenchmarkHub10k(b *testing.B) {
	for _, who := range []struct{ name, user, pass string }{{"admin", "admin", "admin-pw"}, {"member", "nina", "nina-pw"}} {
		for _, push := range []bool{false, true} {
			dir := map[bool]string{false: "pull", true: "push"}[push]
			b.Run(fmt.Sprintf("%s/%s", who.name, dir), func(b *testing.B) {
				benchReplicate(b, hubDBs(b, who.user, who.pass), push)
			})
		}
	}
}
