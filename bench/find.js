// pouchdb-find contender of the Settee benchmark's find phase (run by
// `go run ./bench -phases find`).
//
//   node bench/find.js --local DIR --queries FILE
//
// Opens the leveldb store the pull phase filled in DIR, creates the indexes
// FILE names, runs the first query of each shape (pouchdb-find builds an
// index on its first use: both are timed as the build), then times every
// query once. It prints one JSON line: the build seconds, the latencies in
// ms per shape, and the ids of the first `checked` answers of each shape.
'use strict';

const fs = require('fs');
const PouchDB = require('pouchdb-node');
PouchDB.plugin(require('pouchdb-find'));

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === '--local') opts.local = argv[i + 1];
    else if (argv[i] === '--queries') opts.queries = argv[i + 1];
    else throw new Error('unknown argument ' + argv[i]);
  }
  if (!opts.local || !opts.queries) throw new Error('need --local DIR --queries FILE');
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const spec = JSON.parse(fs.readFileSync(opts.queries, 'utf8'));
  const db = new PouchDB(opts.local, { adapter: 'leveldb' });
  const ms = () => Number(process.hrtime.bigint()) / 1e6;
  const t0 = ms();
  for (const ix of spec.indexes) await db.createIndex(JSON.parse(ix));
  await db.find(JSON.parse(spec.eq[0]));
  await db.find(JSON.parse(spec.range[0]));
  const build = (ms() - t0) / 1000;
  const out = { index_build_seconds: build, eq_ms: [], range_ms: [], ids: [] };
  for (const [qs, lat] of [[spec.eq, out.eq_ms], [spec.range, out.range_ms]]) {
    for (let i = 0; i < qs.length; i++) {
      const q = JSON.parse(qs[i]);
      const t = ms();
      const res = await db.find(q);
      lat.push(ms() - t);
      if (i < spec.checked) out.ids.push(res.docs.map((d) => d._id));
    }
  }
  await db.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack || err) + '\n');
  process.exit(1);
});
