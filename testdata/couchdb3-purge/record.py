#!/usr/bin/env python3
"""Record CouchDB's answers to the purge script into exchanges.jsonl.

Usage: record.py http://admin:pass@127.0.0.1:5984 > exchanges.jsonl

Each line: {"note", "method", "path", "content_type", "req_body",
"status", "resp_body"}. server/purge_replay_test.go replays the same
requests against our server and compares the answers.
"""
import base64
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

BULK = {"new_edits": False, "docs": [
    {"_id": "a", "_rev": "2-bb", "_revisions": {"start": 2, "ids": ["bb", "aa"]}, "v": 1},
    {"_id": "b", "_rev": "1-cc", "v": 2},
    {"_id": "c", "_rev": "2-dd", "_revisions": {"start": 2, "ids": ["dd", "ff"]}, "side": "d"},
    {"_id": "c", "_rev": "2-ee", "_revisions": {"start": 2, "ids": ["ee", "ff"]}, "side": "e"},
    {"_id": "d", "_rev": "2-99", "_revisions": {"start": 2, "ids": ["99", "88"]}, "_deleted": True},
    {"_id": "e", "_rev": "1-12", "v": 5},
]}
J = "application/json"
MANY = json.dumps({"x%03d" % i: [] for i in range(101)})

# (note, method, path, content type, body)
SCRIPT = [
    ("create", "PUT", "/pr", None, None),
    ("write docs", "POST", "/pr/_bulk_docs", J, json.dumps(BULK)),
    ("purge a whole doc", "POST", "/pr/_purge", J, '{"a":["2-bb"]}'),
    ("purged doc is missing", "GET", "/pr/a", None, None),
    ("purged doc is missing from open_revs", "GET", "/pr/a?open_revs=all", None, None),
    ("purge one leaf of a conflict", "POST", "/pr/_purge", J, '{"c":["2-dd"]}'),
    ("the other leaf wins, no conflict", "GET", "/pr/c?conflicts=true&revs=true", None, None),
    ("unknown rev and unknown doc, in request order", "POST", "/pr/_purge", J, '{"e":["1-zz"],"nope":["1-aa"],"b":["9-77"]}'),
    ("a rev that is not a leaf", "POST", "/pr/_purge", J, '{"c":["1-ff"]}'),
    ("a deleted doc", "POST", "/pr/_purge", J, '{"d":["2-99"]}'),
    ("leaf and unknown rev together", "POST", "/pr/_purge", J, '{"b":["1-cc","2-77"]}'),
    ("empty request", "POST", "/pr/_purge", J, "{}"),
    ("malformed rev", "POST", "/pr/_purge", J, '{"e":["bad"]}'),
    ("body is an array", "POST", "/pr/_purge", J, '["e"]'),
    ("revs not a list", "POST", "/pr/_purge", J, '{"e":"1-12"}'),
    ("wrong content type", "POST", "/pr/_purge", "text/plain", '{"e":["1-12"]}'),
    ("too many ids", "POST", "/pr/_purge", J, MANY),
    ("GET _purge", "GET", "/pr/_purge", None, None),
    ("the doc left untouched", "GET", "/pr/e", None, None),
    ("db info after purges", "GET", "/pr", None, None),
    ("changes after purges", "GET", "/pr/_changes?style=all_docs", None, None),
    ("purged_infos", "GET", "/pr/_purged_infos", None, None),
    ("purged_infos_limit default", "GET", "/pr/_purged_infos_limit", None, None),
    ("set purged_infos_limit", "PUT", "/pr/_purged_infos_limit", J, "5"),
    ("purged_infos_limit after set", "GET", "/pr/_purged_infos_limit", None, None),
    ("purged_infos_limit 0", "PUT", "/pr/_purged_infos_limit", J, "0"),
    ("purged_infos_limit string", "PUT", "/pr/_purged_infos_limit", J, '"7"'),
    ("purged_infos_limit float", "PUT", "/pr/_purged_infos_limit", J, "1.5"),
    ("POST _purged_infos_limit", "POST", "/pr/_purged_infos_limit", J, "5"),
    ("recreate a purged id", "PUT", "/pr/a", J, '{"v":9}'),
    ("delete db", "DELETE", "/pr", None, None),
]


def main():
    base = urllib.parse.urlsplit(sys.argv[1])
    auth = base64.b64encode(f"{base.username}:{base.password}".encode()).decode()
    root = f"{base.scheme}://{base.hostname}:{base.port}"
    for note, method, path, ctype, body in SCRIPT:
        req = urllib.request.Request(root + path, method=method,
                                     data=body.encode() if body is not None else None)
        req.add_header("Authorization", "Basic " + auth)
        req.add_header("Accept", J)
        if ctype:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req) as r:
                status, resp = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, resp = e.code, e.read().decode()
        print(json.dumps({"note": note, "method": method, "path": path, "content_type": ctype,
                          "req_body": body, "status": status, "resp_body": resp}))


if __name__ == "__main__":
    main()
