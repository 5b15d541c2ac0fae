// PouchDB contender of the Settee benchmark (run by `go run ./bench`).
//
//   node bench/pouchdb.js pull|push --remote URL --local DIR
//        [--adapter leveldb|memory] [--prefill URL] [--batch-size N]
//   node bench/pouchdb.js sync --remote URL --local DIR
//
// pull replicates REMOTE into the local store, push replicates the local
// store into REMOTE. The local store is the leveldb adapter in DIR (what a
// Node app would use) or the memory adapter (then push needs --prefill URL:
// an untimed pull that fills the in-memory store first). It prints one JSON
// line with the timing and the HTTP requests and socket bytes it made.
// sync runs a live two-way sync (PouchDB's default live options, retry on)
// until it is killed, printing {"paused":true} each time it catches up:
// the harness's idle phase measures its process while nothing changes.
'use strict';

const http = require('http');

// Count requests and socket bytes: node-fetch (used by PouchDB) looks up
// http.request at call time, so wrapping it sees every request.
const stats = { requests: 0, bytes_sent: 0, bytes_received: 0 };
const sockets = new Set();
function socketDone(s) {
  if (sockets.delete(s)) {
    stats.bytes_sent += s.bytesWritten;
    stats.bytes_received += s.bytesRead;
  }
}
const origRequest = http.request;
http.request = function (...args) {
  stats.requests++;
  const req = origRequest.apply(this, args);
  req.on('socket', (s) => {
    if (!sockets.has(s)) {
      sockets.add(s);
      s.once('close', () => socketDone(s));
    }
  });
  return req;
};
function flushSockets() {
  for (const s of [...sockets]) socketDone(s);
}

const PouchDB = require('pouchdb-node');
PouchDB.plugin(require('pouchdb-adapter-memory'));

function parseArgs(argv) {
  const opts = { mode: argv[0], adapter: 'leveldb', batchSize: 0 };
  for (let i = 1; i < argv.length; i += 2) {
    const k = argv[i], v = argv[i + 1];
    if (k === '--remote') opts.remote = v;
    else if (k === '--local') opts.local = v;
    else if (k === '--adapter') opts.adapter = v;
    else if (k === '--prefill') opts.prefill = v;
    else if (k === '--batch-size') opts.batchSize = parseInt(v, 10);
    else throw new Error('unknown flag ' + k);
  }
  if (!opts.remote || !opts.local) throw new Error('--remote and --local are required');
  return opts;
}

// vmHWM is the process's peak RSS, as the Go child reports its own.
function vmHWM() {
  const m = /VmHWM:\s+(\d+) kB/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'));
  return m ? parseInt(m[1], 10) * 1024 : 0;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const local = new PouchDB(opts.local, { adapter: opts.adapter });
  const remote = new PouchDB(opts.remote);
  const repOpts = {};
  if (opts.batchSize > 0) repOpts.batch_size = opts.batchSize;
  if (opts.mode === 'sync') {
    const sync = local.sync(remote, Object.assign({ live: true, retry: true }, repOpts));
    sync.on('paused', (err) => {
      if (!err) process.stdout.write(JSON.stringify({ paused: true }) + '\n');
    });
    sync.on('error', (err) => {
      process.stderr.write('pouchdb.js: sync: ' + JSON.stringify(err) + '\n');
      process.exit(1);
    });
    return;
  }
  if (opts.prefill) {
    await local.replicate.from(new PouchDB(opts.prefill), repOpts);
  }
  flushSockets();
  Object.assign(stats, { requests: 0, bytes_sent: 0, bytes_received: 0 });
  const start = process.hrtime.bigint();
  let result;
  if (opts.mode === 'push') {
    result = await local.replicate.to(remote, repOpts);
  } else {
    result = await local.replicate.from(remote, repOpts);
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  flushSockets();
  const info = await local.info();
  const out = {
    seconds,
    ok: result.ok,
    docs_read: result.docs_read,
    docs_written: result.docs_written,
    doc_write_failures: result.doc_write_failures,
    requests: stats.requests,
    bytes_sent: stats.bytes_sent,
    bytes_received: stats.bytes_received,
    local_doc_count: info.doc_count,
    vm_hwm_bytes: vmHWM(),
    adapter: info.adapter,
  };
  await local.close();
  await remote.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  process.stderr.write('pouchdb.js: ' + (err && err.stack ? err.stack : JSON.stringify(err)) + '\n');
  process.exit(1);
});
