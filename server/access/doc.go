// Package access holds who may do what on a served database, as CouchDB
// 3.5 decides it: the user context of a request, database security
// objects, user documents of the _users database and their password
// hashes, session cookies, JWT bearer tokens and the lockout of repeated
// failed logins. It does no HTTP routing and opens no database: the server
// hands it what it needs.
package access
