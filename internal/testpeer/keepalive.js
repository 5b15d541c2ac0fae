// Loaded into pouchdb-server by the tests (node --require, see pouchdb.go).
// pouchdb-server 4.2.0 dies when a client aborts a multipart upload: its
// multiparty parser emits an 'error' nobody listens to. CouchDB drops such a
// request and serves on, and so must the peer the fault tests cut
// connections to. Only that error is survived; any other still ends the
// process, as it would have.
process.on('uncaughtException', (err) => {
  if (err && err.message === 'Request aborted') {
    console.error('testpeer: a client aborted a multipart upload (pouchdb-server 4.2.0 would exit here)');
    return;
  }
  console.error(err);
  process.exit(1);
});
