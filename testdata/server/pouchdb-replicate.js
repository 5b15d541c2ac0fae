// Replicates between an in-memory PouchDB 9 and a Settee server, both
// ways, one-shot and live, then prints PouchDB's view of both databases as
// JSON on stdout. Run by server/pouchdb_test.go:
//
//   node testdata/server/pouchdb-replicate.js http://127.0.0.1:PORT/db
//
// with the repository's node_modules on NODE_PATH. Every wait is bounded;
// any failure exits non-zero with the error on stderr.
'use strict';

const PouchDB = require('pouchdb-node').plugin(require('pouchdb-adapter-memory'));
const crypto = require('crypto');

const remoteURL = process.argv[2];
if (!remoteURL) {
  console.error('usage: pouchdb-replicate.js URL');
  process.exit(2);
}

const log = [];
function note(msg) { log.push(msg); }

// Bounded wait for a condition.
async function until(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function exists(db, id) {
  try { await db.get(id); return true; } catch (e) { if (e.status === 404) return false; throw e; }
}

// dump returns PouchDB's view of every document of db, deleted ones
// included: winner, leaves (open_revs=all), conflicts, attachment digests
// and the md5 of their bytes as read back.
async function dump(db) {
  const ids = new Set();
  const ch = await db.changes({ style: 'all_docs' });
  for (const r of ch.results) ids.add(r.id);
  const out = {};
  for (const id of [...ids].sort()) {
    const leaves = await db.get(id, { open_revs: 'all', revs: true, attachments: true, binary: true });
    const entry = { leaves: [], deleted_leaves: [] };
    for (const l of leaves) {
      if (!l.ok) continue;
      (l.ok._deleted ? entry.deleted_leaves : entry.leaves).push(l.ok._rev);
    }
    entry.leaves.sort();
    entry.deleted_leaves.sort();
    try {
      const w = await db.get(id, { conflicts: true, attachments: true, binary: true });
      entry.winner = w._rev;
      entry.conflicts = (w._conflicts || []).slice().sort();
      const body = Object.assign({}, w);
      for (const k of Object.keys(body)) if (k.startsWith('_')) delete body[k];
      entry.body = body;
      entry.attachments = {};
      for (const [name, a] of Object.entries(w._attachments || {})) {
        const bytes = Buffer.isBuffer(a.data) ? a.data : Buffer.from(a.data || '', 'base64');
        entry.attachments[name] = {
          digest: a.digest,
          content_type: a.content_type,
          md5: 'md5-' + crypto.createHash('md5').update(bytes).digest('base64'),
          length: bytes.length,
        };
      }
    } catch (e) {
      if (e.status !== 404) throw e;
      entry.deleted = true;
    }
    out[id] = entry;
  }
  return out;
}

async function main() {
  const local = new PouchDB('local-' + Date.now(), { adapter: 'memory' });
  const remote = new PouchDB(remoteURL);
  await remote.info(); // the Go test created the database and seeded it

  // Local edits: a plain doc, a doc with an attachment, a deleted doc and a
  // third branch of the conflicted doc "conf" that the server also holds.
  await local.put({ _id: 'p1', x: 1 });
  await local.put({
    _id: 'p2', kind: 'att',
    _attachments: { 'hello.txt': { content_type: 'text/plain', data: Buffer.from('hello from pouchdb').toString('base64') } },
  });
  const pdel = await local.put({ _id: 'pdel', doomed: true });
  await local.remove('pdel', pdel.rev);
  await local.bulkDocs([
    { _id: 'conf', _rev: '2-ccc', v: 'c', _revisions: { start: 2, ids: ['ccc', '111'] } },
  ], { new_edits: false });
  // A large attachment, sent through the same path as small ones.
  const big = Buffer.alloc(300 * 1024, 7);
  await local.put({ _id: 'pbig', _attachments: { 'big.bin': { content_type: 'application/octet-stream', data: big.toString('base64') } } });

  // One-shot, both directions.
  const push = await PouchDB.replicate(local, remote);
  note('push: ' + push.docs_written + ' written, ok=' + push.ok);
  if (!push.ok || push.doc_write_failures) throw new Error('push failed: ' + JSON.stringify(push.errors));
  const pull = await PouchDB.replicate(remote, local);
  note('pull: ' + pull.docs_written + ' written, ok=' + pull.ok);
  if (!pull.ok || pull.doc_write_failures) throw new Error('pull failed: ' + JSON.stringify(pull.errors));

  // An edit on each side resolving nothing, then a conflict made live.
  // Live two-way sync: writes on either side arrive on the other.
  const sync = local.sync(remote, { live: true, retry: false });
  let syncErr = null;
  sync.on('error', (e) => { syncErr = e; });
  try {
    await local.put({ _id: 'live-local', at: 'local' });
    await until('live-local on the server', () => exists(remote, 'live-local'));
    await remote.put({ _id: 'live-remote', at: 'remote' });
    await until('live-remote in pouchdb', () => exists(local, 'live-remote'));
    // Delete on the server, see it locally.
    const s1 = await remote.get('s1');
    await remote.remove('s1', s1._rev);
    await until('s1 deleted in pouchdb', async () => !(await exists(local, 's1')));
    // Attachment added locally arrives on the server.
    const lr = await local.get('live-local');
    await local.putAttachment('live-local', 'note.txt', lr._rev, Buffer.from('live attachment'), 'text/plain');
    await until('live attachment on the server', async () => {
      try { const d = await remote.get('live-local'); return !!(d._attachments && d._attachments['note.txt']); } catch (e) { return false; }
    });
    if (syncErr) throw syncErr;
  } finally {
    sync.cancel();
  }
  // Let both directions settle one last time, one-shot.
  await PouchDB.replicate(local, remote);
  await PouchDB.replicate(remote, local);

  const result = { log, local: await dump(local), remote: await dump(remote) };
  process.stdout.write(JSON.stringify(result, null, 1) + '\n');
}

main().then(() => process.exit(0), (e) => {
  console.error('pouchdb-replicate failed:', e && (e.stack || JSON.stringify(e)));
  console.error(log.join('\n'));
  process.exit(1);
});
