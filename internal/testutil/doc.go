// Package testutil holds the helpers that tests of every layer share: a
// wait for a condition, one HTTP request with a JSON body and answer, a
// buffer that a child process writes while a test reads it. It imports
// only the standard library, so that any package's tests (localdb's
// included) may use it without reaching up.
package testutil
