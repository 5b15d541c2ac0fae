#!/usr/bin/env python3
"""Records Apache CouchDB 3.5's answers to the scripted requests in
requests.json, in the JSONL schema of testdata/couchdb35/exchanges (see its
README), against a CouchDB given as COUCH=http://admin:pw@127.0.0.1:5984.

Each script names a database; it is created afresh and loaded with
testdata/couchdb35/dataset.ndjson as the corpus README says (one line per
request), then its requests are sent in order. Nothing here builds or
configures CouchDB: it must be running already.
"""
import base64, json, os, sys, time, urllib.parse, urllib.request, urllib.error

couch = os.environ["COUCH"].rstrip("/")
u = urllib.parse.urlsplit(couch)
auth = "Basic " + base64.b64encode(f"{u.username}:{u.password}".encode()).decode()
base = f"{u.scheme}://{u.hostname}:{u.port}"
here = os.path.dirname(os.path.abspath(__file__))
dataset = os.path.join(here, "..", "couchdb35", "dataset.ndjson")


def send(method, path, body=None, headers=None):
    h = {"Authorization": auth, "Accept": "application/json"}
    data = None
    if body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    req = urllib.request.Request(base + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.reason, dict(r.headers), r.read(), h, data
    except urllib.error.HTTPError as e:
        return e.code, e.reason, dict(e.headers), e.read(), h, data


def load(db):
    send("DELETE", f"/{db}")
    st = send("PUT", f"/{db}?q=1")[0]
    assert st in (201, 202), st
    for line in open(dataset):
        d = json.loads(line)
        if d["_id"].startswith("_local/"):
            rest = d["_id"][len("_local/"):]
            d.pop("_rev", None)
            send("PUT", f"/{db}/_local/{urllib.parse.quote(rest, safe='')}", d)
        else:
            st = send("POST", f"/{db}/_bulk_docs", {"new_edits": False, "docs": [d]})[0]
            assert st == 201, st


def quiesce(db):
    """Waits (at most 60 s) for the compaction CouchDB may start in the
    background after the load, whose compact_running would show in the
    recorded db info."""
    for _ in range(600):
        if not json.loads(send("GET", f"/{db}")[3]).get("compact_running"):
            return
        time.sleep(0.1)


def main():
    script = json.load(open(os.path.join(here, sys.argv[1])))
    db = script["db"]
    load(db)
    quiesce(db)
    out = []
    t0 = time.time()
    for i, step in enumerate(script["requests"], 1):
        path = "/" + db + step["path"]
        body = step.get("body")
        raw_body = body if isinstance(body, str) or body is None else json.dumps(body)
        start = time.time()
        status, reason, rh, rb, qh, data = send(step["method"], path, raw_body, step.get("headers"))
        p, _, q = path.partition("?")
        qh = dict(qh)
        qh["Authorization"] = "Basic <masked>"
        for k in ("Date", "Server", "X-Couch-Request-ID", "X-CouchDB-Body-Time"):
            rh.pop(k, None)
        try:
            text, b64 = rb.decode("utf-8"), False
        except UnicodeDecodeError:
            text, b64 = base64.b64encode(rb).decode(), True
        out.append({
            "seq": i, "conn": 1, "t_start_ms": round((start - t0) * 1000, 1),
            "duration_ms": round((time.time() - start) * 1000, 1), "ttfb_ms": 0,
            "method": step["method"], "path": p,
            "path_segments": [urllib.parse.unquote(s) for s in p.strip("/").split("/")],
            "query": q, "query_params": urllib.parse.parse_qsl(q, keep_blank_values=True),
            "req_headers": qh, "note": step["note"],
            "req_body": raw_body or "", "req_body_base64": False, "req_body_size": len(data or b""),
            "status": status, "reason": reason, "resp_headers": rh,
            "resp_body": text, "resp_body_base64": b64, "resp_body_size": len(rb),
        })
    name = os.path.splitext(sys.argv[1])[0] + ".jsonl"
    with open(os.path.join(here, name), "w") as f:
        for e in out:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    print(f"{name}: {len(out)} exchanges")


main()
