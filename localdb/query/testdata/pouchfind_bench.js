// pouchdb-find contender of BenchmarkFindVsPouchDB (localdb/query):
//
//   node pouchfind_bench.js DIR DOCS QUERIES
//
// loads DOCS orders (the Go benchmark's orderDoc set) into a leveldb
// PouchDB in DIR, creates the same two indexes, runs QUERIES of each of the
// Go benchmark's queries and prints one JSON line: the p50 latencies in ms
// and the load and first-query (index build) times in seconds.
'use strict';

const crypto = require('crypto');
const PouchDB = require('pouchdb-node').plugin(require('pouchdb-find'));

const [dir, nDocs, nQueries] = [process.argv[2], parseInt(process.argv[3], 10), parseInt(process.argv[4], 10)];

function orderDoc(i) {
  return {
    _id: 'order-' + String(i).padStart(8, '0'),
    type: 'order',
    customer: 'c' + String(i % 5000).padStart(4, '0'),
    when: i,
    status: ['open', 'paid', 'shipped'][i % 3],
    total: i % 997,
    note: 'x'.repeat(180),
  };
}

function p50(lat) {
  lat.sort((a, b) => a - b);
  return lat[Math.floor(lat.length / 2)];
}

// timed runs a query, checks it returned want docs (when want is set) and
// returns its latency in ms.
async function timed(db, q, want) {
  const t0 = process.hrtime.bigint();
  const res = await db.find(q);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (want && res.docs.length !== want) throw new Error(JSON.stringify(q) + ': ' + res.docs.length + ' docs');
  return ms;
}

async function main() {
  const db = new PouchDB(dir);
  const t0 = Date.now();
  for (let start = 0; start < nDocs; start += 1000) {
    const docs = [];
    for (let i = start; i < Math.min(start + 1000, nDocs); i++) docs.push(orderDoc(i));
    await db.bulkDocs(docs);
  }
  const loadS = (Date.now() - t0) / 1000;
  await db.createIndex({ index: { fields: ['customer'] }, ddoc: 'o', name: 'customer' });
  await db.createIndex({ index: { fields: ['status', 'when'] }, ddoc: 'o', name: 'status-when' });
  const eq = (i) => ({ selector: { customer: 'c' + String((i * 7919) % 5000).padStart(4, '0') } });
  const range = (i) => ({
    selector: { status: 'paid', when: { $gt: 1000 + ((i * 7919) % 90000) } },
    sort: [{ status: 'desc' }, { when: 'desc' }],
    limit: 20,
  });
  // 20 orders per customer at 100k docs; the range needs the full set.
  const eqWant = Math.max(1, Math.floor(nDocs / 5000));
  const rangeWant = nDocs >= 100000 ? 20 : 0;
  const t1 = Date.now();
  await timed(db, eq(0), eqWant); // builds the indexes
  await timed(db, range(0), rangeWant);
  const buildS = (Date.now() - t1) / 1000;
  const eqLat = [], rangeLat = [];
  for (let i = 0; i < nQueries; i++) {
    eqLat.push(await timed(db, eq(i), eqWant));
    rangeLat.push(await timed(db, range(i), rangeWant));
  }
  console.log(JSON.stringify({ eq20_p50_ms: p50(eqLat), range_p50_ms: p50(rangeLat), load_s: loadS, build_s: buildS }));
  await db.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
