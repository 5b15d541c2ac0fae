// Replicates with a Settee server that has users: refused without
// credentials, then with basic auth, then with an AuthSession cookie got
// from POST /_session. Prints what happened as JSON. Run by
// server/pouchdb_test.go:
//
//   node testdata/server/pouchdb-auth.js http://127.0.0.1:PORT/db USER PASSWORD
'use strict';

const PouchDB = require('pouchdb-node').plugin(require('pouchdb-adapter-memory'));

const [url, user, pass] = process.argv.slice(2);

async function main() {
  const out = {};
  const anon = new PouchDB(url, { skip_setup: true });
  try {
    await anon.allDocs(); // info() does not check the status
    out.anonymous = 'allowed';
  } catch (e) {
    out.anonymous = e.status;
  }
  const local = new PouchDB('auth-local-' + Date.now(), { adapter: 'memory' });
  await local.put({ _id: 'from-pouch', v: 1 });

  const basic = new PouchDB(url, { auth: { username: user, password: pass } });
  const push = await PouchDB.replicate(local, basic);
  out.basicPush = push.docs_written;

  // Log in and replicate with the session cookie only.
  const origin = new URL(url).origin;
  const res = await PouchDB.fetch(origin + '/_session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: user, password: pass }),
  });
  out.login = res.status;
  const setCookie = res.headers.get('set-cookie') || '';
  const cookie = setCookie.split(';')[0];
  out.cookieName = cookie.split('=')[0];
  const withCookie = new PouchDB(url, {
    fetch: (u, opts) => {
      opts.headers.set('Cookie', cookie);
      return PouchDB.fetch(u, opts);
    },
  });
  const pulled = new PouchDB('auth-pulled-' + Date.now(), { adapter: 'memory' });
  const pull = await PouchDB.replicate(withCookie, pulled);
  out.cookiePull = pull.docs_written;
  out.pulledIDs = (await pulled.allDocs()).rows.map((r) => r.id).sort();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().then(() => process.exit(0), (e) => {
  console.error('pouchdb-auth failed:', e && (e.stack || JSON.stringify(e)));
  process.exit(1);
});
