// Syncs an in-memory PouchDB 9 holding N documents with a database that
// does not exist yet, as a web app's first sync does (PouchDB creates it
// with PUT /{db}), then prints the remote's doc_count. Run by
// cmd/settee/serve_test.go:
//
//   node testdata/cli/pouchdb-sync-new.js http://127.0.0.1:PORT/newdb N
//
// with the repository's node_modules on NODE_PATH.
'use strict';

const PouchDB = require('pouchdb-node').plugin(require('pouchdb-adapter-memory'));

async function main() {
  const [url, n] = [process.argv[2], Number(process.argv[3])];
  const local = new PouchDB('local', { adapter: 'memory' });
  const docs = [];
  for (let i = 0; i < n; i++) docs.push({ _id: 'p' + String(i).padStart(3, '0'), i });
  await local.bulkDocs(docs);
  const remote = new PouchDB(url);
  const res = await local.sync(remote);
  if (res.push.docs_written !== n) throw new Error('pushed ' + res.push.docs_written + ' docs, want ' + n);
  const info = await remote.info();
  process.stdout.write(JSON.stringify({ doc_count: info.doc_count }) + '\n');
}

const timer = setTimeout(() => { console.error('timed out'); process.exit(1); }, 60000);
main().then(() => clearTimeout(timer), (err) => { console.error(err); process.exit(1); });
