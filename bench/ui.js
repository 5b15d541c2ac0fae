// PouchDB contender of the Settee benchmark's ui phase (run by
// `go run ./bench -phases ui`).
//
//   node bench/ui.js --remote URL --local DIR [--adapter leveldb|memory]
//        [--readers] [--interval-ms 5] [--idle-seconds 5]
//
// What the Go child `ui` does, with PouchDB 9: a new store in DIR, the json
// index ["type", "age"] created with pouchdb-find's createIndex, then a
// one-shot PouchDB.replicate from REMOTE. With --readers, every interval
// meanwhile a find (the Go child's query) and then a get of the first
// document found, timed with process.hrtime; after the pull the same reads
// run --idle-seconds on the full, idle store. It prints one JSON line with
// the fields of the Go child's uiStats that apply.
'use strict';

const fs = require('fs');
const PouchDB = require('pouchdb-node');
PouchDB.plugin(require('pouchdb-adapter-memory'));
loadFind();

// The Go child's index and query (bench/ui_child.go).
const uiIndex = { index: { fields: ['type', 'age'] }, ddoc: 'ui-type-age', name: 'type-age', type: 'json' };
const uiQuery = { selector: { type: 'contact', age: { $gt: 30 } }, sort: [{ type: 'asc' }, { age: 'asc' }], limit: 20 };
const missing = 'missing-until-found';

// loadFind installs PouchDB 9's own pouchdb-find: the pouchdb package
// ships it only as a browser script (it wants the globals self and
// PouchDB), and the pouchdb-find package installed beside it is
// pouchdb-server's older one.
function loadFind() {
  const had = { self: globalThis.self, PouchDB: globalThis.PouchDB };
  globalThis.self = globalThis;
  globalThis.PouchDB = PouchDB;
  try {
    require('pouchdb/dist/pouchdb.find.js');
  } finally {
    for (const k of Object.keys(had)) {
      if (had[k] === undefined) delete globalThis[k];
      else globalThis[k] = had[k];
    }
  }
  if (typeof PouchDB.prototype.createIndex !== 'function') throw new Error('pouchdb-find did not load');
}

function parseArgs(argv) {
  const opts = { adapter: 'leveldb', readers: false, intervalMs: 5, idleSeconds: 5 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--readers') { opts.readers = true; continue; }
    const v = argv[++i];
    if (v === undefined) throw new Error('flag ' + k + ' needs a value');
    if (k === '--remote') opts.remote = v;
    else if (k === '--local') opts.local = v;
    else if (k === '--adapter') opts.adapter = v;
    else if (k === '--interval-ms') opts.intervalMs = Number(v);
    else if (k === '--idle-seconds') opts.idleSeconds = Number(v);
    else throw new Error('unknown flag ' + k);
  }
  if (!opts.remote || !opts.local) throw new Error('--remote and --local are required');
  if (!(opts.intervalMs > 0) || !(opts.idleSeconds >= 0)) throw new Error('--interval-ms must be positive, --idle-seconds not negative');
  return opts;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// readLoop runs, every intervalMs until stop() says so, the find and then a
// get of the first document it found (a fixed id until it finds one). A
// round that overruns the interval delays the next, as the Go child's
// ticker does: the next round starts at once, then on the interval's grid.
async function readLoop(db, intervalMs, stop) {
  const r = { find: [], get: [], rows: 0 };
  let id = missing;
  let next = nowMs() + intervalMs;
  for (;;) {
    const wait = next - nowMs();
    if (wait > 0) await sleep(wait);
    if (stop()) break;
    const now = nowMs();
    next = now > next + intervalMs ? now + intervalMs - ((now - next) % intervalMs) : next + intervalMs;
    let t = nowMs();
    const res = await db.find(uiQuery);
    r.find.push(nowMs() - t);
    r.rows = res.docs.length;
    if (res.docs.length > 0) id = res.docs[0]._id;
    t = nowMs();
    try {
      await db.get(id);
    } catch (err) {
      if (id !== missing) throw new Error('get ' + id + ': ' + (err && err.message));
    }
    r.get.push(nowMs() - t);
  }
  r.find.sort((a, b) => a - b);
  r.get.sort((a, b) => a - b);
  return r;
}

// pct is the q-quantile of sorted latencies (the Go child's pct: nearest
// rank).
function pct(sorted, q) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

function vmHWM() {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? parseInt(m[1], 10) * 1024 : 0;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  fs.rmSync(opts.local, { recursive: true, force: true });
  const db = new PouchDB(opts.local, { adapter: opts.adapter });
  const remote = new PouchDB(opts.remote);
  await db.createIndex(uiIndex);

  let done = false;
  const reads = opts.readers ? readLoop(db, opts.intervalMs, () => done) : null;
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  let result;
  try {
    result = await PouchDB.replicate(remote, db);
  } finally {
    done = true;
  }
  const seconds = (nowMs() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (result.doc_write_failures > 0) throw new Error(result.doc_write_failures + ' documents failed to replicate');
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const st = {
    readers: opts.readers,
    docs: result.docs_written,
    seconds,
    docs_per_sec: result.docs_written / seconds,
    cpu_seconds: cpuSeconds,
    cpu_share: cpuSeconds / seconds,
  };
  if (reads) {
    const r = await reads;
    Object.assign(st, {
      finds: r.find.length, find_p50_ms: pct(r.find, 0.5), find_p99_ms: pct(r.find, 0.99), find_max_ms: pct(r.find, 1),
      gets: r.get.length, get_p50_ms: pct(r.get, 0.5), get_p99_ms: pct(r.get, 0.99), get_max_ms: pct(r.get, 1),
      find_rows_last: r.rows,
    });
    const until = nowMs() + opts.idleSeconds * 1000;
    const idle = await readLoop(db, opts.intervalMs, () => nowMs() >= until);
    Object.assign(st, {
      idle_finds: idle.find.length,
      idle_find_p50_ms: pct(idle.find, 0.5), idle_find_p99_ms: pct(idle.find, 0.99), idle_find_max_ms: pct(idle.find, 1),
      idle_get_p99_ms: pct(idle.get, 0.99), idle_get_max_ms: pct(idle.get, 1),
    });
  }
  await db.close();
  await remote.close();
  st.vm_hwm_bytes = vmHWM();
  process.stdout.write(JSON.stringify(st) + '\n');
}

main().catch((err) => {
  process.stderr.write('ui.js: ' + (err && err.stack ? err.stack : JSON.stringify(err)) + '\n');
  process.exit(1);
});
