// Drives PouchDB 9 in a real headless Chromium against `settee serve`, as
// a web app does: run by cmd/settee/browser_test.go as
//
//   node testdata/browser/pouchdb-browser.js CONFIG_JSON
//
// CONFIG_JSON: {"chromium": path, "userDataDir": empty dir, "server": the
// server's own URL (server-side writes), "user", "password", "runs":
// [{"label", "page": page URL, "remote": the database URL the page uses}]}.
// For each run the page pushes N documents with Blob attachments from one
// browser database, pulls them into a second one, follows the server live
// while the server gets a write, and ends a conflict edited on both sides.
// Prints one JSON object per run on stdout; any failure exits non-zero.
'use strict';

const { chromium } = require('playwright-core');

const N = 100;

async function serverFetch(cfg, method, path, body) {
  const auth = 'Basic ' + Buffer.from(cfg.user + ':' + cfg.password).toString('base64');
  const res = await fetch(cfg.server + path, {
    method,
    headers: { Authorization: auth, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(method + ' ' + path + ': ' + res.status + ' ' + JSON.stringify(json));
  return json;
}

// In the page: a fresh pair of browser databases and the remote. With
// login ("name:password"), the page signs in with POST /_session on the
// server's origin and reaches the remote with that cookie alone.
async function setup({ remote, user, password, name, login }) {
  let opts = { auth: { username: user, password } };
  let session = null;
  if (login) {
    const [n, p] = login.split(':');
    const origin = new URL(remote).origin;
    const res = await fetch(origin + '/_session', {
      method: 'POST', credentials: 'include',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ name: n, password: p }),
    });
    const body = await res.json();
    session = { ok: res.ok && body.ok === true, name: body.name };
    const who = await (await fetch(origin + '/_session', { credentials: 'include' })).json();
    session.cookieOnly = who.userCtx && who.userCtx.name === n && who.info.authenticated === 'cookie';
    opts = { fetch: (url, o) => { o.credentials = 'include'; return PouchDB.fetch(url, o); } };
  }
  window.t = {
    a: new PouchDB(name + '-a'),
    b: new PouchDB(name + '-b'),
    remote: new PouchDB(remote, opts),
  };
  return session;
}

// In the page: sign out, then try the remote with the cleared cookie.
async function logout({ remote }) {
  const origin = new URL(remote).origin;
  await fetch(origin + '/_session', { method: 'DELETE', credentials: 'include' });
  const res = await fetch(remote, { credentials: 'include', headers: { Accept: 'application/json' } });
  return res.status === 401;
}

// In the page: N documents with Blob attachments, pushed; then pulled into b.
async function pushPull({ n }) {
  const { a, b, remote } = window.t;
  const docs = [];
  for (let i = 0; i < n; i++) {
    const bytes = new Uint8Array(200 + (i * 37) % 3000);
    for (let j = 0; j < bytes.length; j++) bytes[j] = (i * 31 + j * 7) & 0xff;
    const atts = { 'data.bin': { content_type: 'application/octet-stream', data: new Blob([bytes]) } };
    if (i % 3 === 0) atts['note.txt'] = { content_type: 'text/plain', data: new Blob(['note ' + i + ' ü'], { type: 'text/plain' }) };
    docs.push({ _id: 'doc-' + String(i).padStart(3, '0'), i, tags: ['t' + (i % 5)], _attachments: atts });
  }
  const put = await a.bulkDocs(docs);
  if (put.some((r) => !r.ok)) throw new Error('bulkDocs: ' + JSON.stringify(put.filter((r) => !r.ok)));
  const t0 = performance.now();
  const push = await a.replicate.to(remote);
  const t1 = performance.now();
  const pull = await b.replicate.from(remote);
  const t2 = performance.now();
  const dump = async (db) => {
    const res = await db.allDocs({ include_docs: true, attachments: true });
    return res.rows.map((r) => {
      const atts = {};
      for (const [k, v] of Object.entries(r.doc._attachments || {})) atts[k] = { digest: v.digest, data: v.data, type: v.content_type };
      return { id: r.id, rev: r.value.rev, i: r.doc.i, tags: r.doc.tags, atts };
    });
  };
  const [da, db_, dr] = [await dump(a), await dump(b), await dump(remote)];
  return {
    pushed: push.docs_written, pushOK: push.ok, pulled: pull.docs_written, pullOK: pull.ok,
    pushMs: Math.round(t1 - t0), pullMs: Math.round(t2 - t1),
    same: JSON.stringify(da) === JSON.stringify(db_), sameAsRemote: JSON.stringify(da) === JSON.stringify(dr),
    count: db_.length, attachments: db_.reduce((s, d) => s + Object.keys(d.atts).length, 0),
  };
}

// In the page: follow the remote live into b.
async function startLive() {
  const { b, remote } = window.t;
  window.t.live = b.replicate.from(remote, { live: true, retry: true });
  window.t.liveErr = null;
  window.t.live.on('error', (e) => { window.t.liveErr = String(e); });
  return true;
}

// In the page: wait (bounded) until b has id; at is the wall clock then,
// to compare with the time of the server-side write.
async function waitFor({ id, ms }) {
  const { b } = window.t;
  const t0 = performance.now();
  for (;;) {
    try {
      await b.get(id);
      return { found: true, at: Date.now() };
    } catch (e) {
      if (e.status !== 404) throw e;
    }
    if (performance.now() - t0 > ms) return { found: false, err: window.t.liveErr };
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function stopLive() {
  window.t.live.cancel();
  return true;
}

// In the page: edit doc id in b (its side of the conflict).
async function editLocal({ id }) {
  const d = await window.t.b.get(id);
  d.side = 'browser';
  return (await window.t.b.put(d)).rev;
}

// In the page: sync b both ways, and say what b holds for id.
async function syncAndRead({ id }) {
  const { b, remote } = window.t;
  const s = await b.sync(remote);
  const d = await b.get(id, { conflicts: true });
  return { pushOK: s.push.ok, pullOK: s.pull.ok, rev: d._rev, side: d.side, conflicts: d._conflicts || [] };
}

// In the page: end the conflict by removing the losing leaves, then sync.
async function resolve({ id }) {
  const { b, remote } = window.t;
  const d = await b.get(id, { conflicts: true });
  for (const rev of d._conflicts || []) await b.remove(id, rev);
  await b.sync(remote);
  const after = await b.get(id, { conflicts: true });
  return { rev: after._rev, conflicts: after._conflicts || [] };
}

// ev runs fn(arg) in the page; a PouchDB error comes back with its status,
// name and message (playwright would otherwise lose them).
async function ev(page, fn, arg) {
  return page.evaluate(async ({ src, arg }) => {
    try {
      return await (0, eval)('(' + src + ')')(arg);
    } catch (e) {
      throw new Error('in the page: ' + JSON.stringify({ status: e.status, name: e.name, message: e.message, reason: e.reason }));
    }
  }, { src: fn.toString(), arg });
}

async function run(ctx, cfg, r) {
  const out = { label: r.label };
  const page = await ctx.newPage();
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.goto(r.page);
  const name = 'settee-' + r.label;
  const session = await ev(page, setup, { remote: r.remote, user: cfg.user, password: cfg.password, name, login: r.login });
  out.pushPull = await ev(page, pushPull, { n: N });

  // A server-side write reaches the page live.
  await ev(page, startLive);
  await new Promise((res) => setTimeout(res, 300)); // the feed is waiting
  const dbPath = '/' + r.db;
  const wrote = Date.now();
  await serverFetch(cfg, 'PUT', dbPath + '/from-server', { by: 'server' });
  out.live = await ev(page, waitFor, { id: 'from-server', ms: 10000 });
  out.live.ms = out.live.found ? out.live.at - wrote : -1;
  await ev(page, stopLive);

  // A conflict edited on both sides: both see the same winner, then it ends.
  const id = 'doc-007';
  const cur = await serverFetch(cfg, 'GET', dbPath + '/' + id);
  const browserRev = await ev(page, editLocal, { id });
  const serverRev = (await serverFetch(cfg, 'PUT', dbPath + '/' + id, { _rev: cur._rev, i: cur.i, tags: cur.tags, _attachments: cur._attachments, side: 'server' })).rev;
  const seen = await ev(page, syncAndRead, { id });
  const onServer = await serverFetch(cfg, 'GET', dbPath + '/' + id + '?conflicts=true');
  out.conflict = { browserRev, serverRev, browser: seen, server: { rev: onServer._rev, side: onServer.side, conflicts: onServer._conflicts || [] } };
  const ended = await ev(page, resolve, { id });
  const serverAfter = await serverFetch(cfg, 'GET', dbPath + '/' + id + '?conflicts=true');
  out.resolved = { browser: ended, server: { rev: serverAfter._rev, conflicts: serverAfter._conflicts || [] } };
  if (r.login) {
    out.login = { ok: session.ok, name: session.name, cookieOnly: session.cookieOnly };
    out.login.refusedAfterLogout = await ev(page, logout, { remote: r.remote });
  }
  out.pageErrors = consoleErrors;
  await page.close();
  return out;
}

async function main() {
  const cfg = JSON.parse(process.argv[2]);
  const ctx = await chromium.launchPersistentContext(cfg.userDataDir, {
    executablePath: cfg.chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    for (const r of cfg.runs) {
      process.stdout.write(JSON.stringify(await run(ctx, cfg, r)) + '\n');
    }
  } finally {
    await ctx.close();
  }
}

const timer = setTimeout(() => { console.error('timed out'); process.exit(1); }, 50000);
main().then(() => clearTimeout(timer), (err) => { console.error(err && err.stack || err); process.exit(1); });
