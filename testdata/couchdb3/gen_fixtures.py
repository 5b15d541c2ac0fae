#!/usr/bin/env python3
"""Writes the recorded CouchDB 3 responses of this folder as raw HTTP/1.1
responses (status line, headers, CRLF, body), byte for byte as CouchDB 3.x
sends them (shapes from the CouchDB replication protocol spec and
chttpd_db.erl). Run it from this folder; the .http files are committed."""
import base64, gzip, hashlib, json

CRLF = b"\r\n"

def md5(b):
    return "md5-" + base64.b64encode(hashlib.md5(b).digest()).decode()

def chunked(body, size=97):
    out = b""
    for i in range(0, len(body), size):
        c = body[i:i + size]
        out += b"%x\r\n" % len(c) + c + CRLF
    return out + b"0\r\n\r\n"

def response(name, status, headers, body, chunk=False, cut=None):
    lines = ["HTTP/1.1 " + status, "Server: CouchDB/3.3.3 (Erlang OTP/24)",
             "Date: Sat, 21 Nov 2026 19:00:00 GMT", "Cache-Control: must-revalidate"]
    lines += headers
    if chunk:
        lines.append("Transfer-Encoding: chunked")
        payload = chunked(body)
    else:
        lines.append("Content-Length: %d" % len(body))
        payload = body
    if cut is not None:
        payload = payload[:cut]
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + payload
    with open(name, "wb") as f:
        f.write(raw)

def js(o):
    return json.dumps(o, separators=(",", ":")).encode()

RECIPE = b"1. Cook spaghetti\n2. Cook meetballs\n3. Mix them\n4. Add tomato sauce\n5. ...\n6. PROFIT!\n\n"
R1 = "917fa2381192822767f010b95b45325b"
HIST7 = ["474f12eb068c717243487a9505f6123b", "5949cfcd437e3ee22d2d98a26d1a83bf",
         "00ecbbc54e2a171156ec345b77dfdf59", "fc997b62794a6268f2636a4a176efcd6",
         "3552c87351aadc1e4bea2461a1e8113a", "404838bc2862ce76c6ebed046f9eb542",
         "5defd9d813628cea6e98196eb0ee8594"]

# --- open_revs answered as multipart/mixed (CouchDB send_docs_multipart) ---
def open_revs_mixed():
    outer, inner = "7b1596fc4940bc1be725ad67f11ec1c4", "a81a77b0ca68389dda3243a43ca946f2"
    doc1 = {"_id": "SpaghettiWithMeatballs", "_rev": "1-" + R1,
            "_revisions": {"start": 1, "ids": [R1]},
            "description": "An Italian-American delicious dish",
            "ingredients": ["spaghetti", "tomato sauce", "meatballs"], "name": "Spaghetti with meatballs"}
    doc7 = {"_id": "SpaghettiWithMeatballs", "_rev": "7-" + HIST7[0],
            "_revisions": {"start": 7, "ids": HIST7},
            "description": "An Italian-American delicious dish",
            "ingredients": ["spaghetti", "tomato sauce", "meatballs", "love"], "name": "Spaghetti with meatballs",
            "_attachments": {"recipe.txt": {"content_type": "text/plain", "revpos": 7, "digest": md5(RECIPE),
                                            "length": len(RECIPE), "follows": True}}}
    b = b"--" + outer.encode()
    # document without attachment bytes: a plain JSON part
    b += b"\r\nContent-Type: application/json\r\n\r\n" + js(doc1) + b"\r\n--" + outer.encode()
    # document with attachment bytes: a nested multipart/related part
    b += ('\r\nContent-Type: multipart/related; boundary="%s"\r\n\r\n' % inner).encode()
    b += b"--" + inner.encode() + b"\r\nContent-Type: application/json\r\n\r\n" + js(doc7)
    b += b"\r\n--" + inner.encode()
    b += b'\r\nContent-Disposition: attachment; filename="recipe.txt"\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n' % len(RECIPE)
    b += RECIPE + b"\r\n--" + inner.encode() + b"--"
    b += b"\r\n--" + outer.encode()
    # a missing revision
    b += b'\r\nContent-Type: application/json; error="true"\r\n\r\n' + js({"missing": "3-6bcedf1f6b2e1dc3b4d6a3ec1d4a4b7e"})
    b += b"\r\n--" + outer.encode() + b"--"
    response("open_revs_mixed.http", "200 OK", ['Content-Type: multipart/mixed; boundary="%s"' % outer], b, chunk=True)
    return b, outer

# --- two attachments, JSON order not alphabetical, one stored gzip-encoded ---
def open_revs_two_atts(bad_digest=False):
    outer, inner = "0b1ac2c9bd1c44a1b5b3c1f30c7f7a11", "5c2e3cde0a7e4d1f9a3f7b3f0c2b8e44"
    zeta = bytes(range(256)) * 40            # 10240 bytes of binary data
    alpha = b"hello, world\n" * 500          # compressible text, sent gzip-encoded
    alpha_gz = gzip.compress(alpha, mtime=0)
    digest_alpha = md5(alpha)
    if bad_digest:
        digest_alpha = md5(b"something else")
    atts = {"zeta.bin": {"content_type": "application/octet-stream", "revpos": 2, "digest": md5(zeta),
                         "length": len(zeta), "follows": True},
            "alpha.txt": {"content_type": "text/plain", "revpos": 2, "digest": digest_alpha,
                          "length": len(alpha), "follows": True, "encoding": "gzip",
                          "encoded_length": len(alpha_gz)},
            "old.txt": {"content_type": "text/plain", "revpos": 1, "digest": md5(b"old"), "length": 3, "stub": True}}
    doc = {"_id": "two/atts", "_rev": "2-" + "b" * 32, "_revisions": {"start": 2, "ids": ["b" * 32, "a" * 32]},
           "kind": "binary"}
    # json.dumps keeps insertion order: zeta.bin is listed (and sent) first
    doc["_attachments"] = atts
    b = b"--" + outer.encode()
    b += ('\r\nContent-Type: multipart/related; boundary="%s"\r\n\r\n' % inner).encode()
    b += b"--" + inner.encode() + b"\r\nContent-Type: application/json\r\n\r\n" + js(doc)
    b += b"\r\n--" + inner.encode()
    b += b'\r\nContent-Disposition: attachment; filename="zeta.bin"\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n' % len(zeta)
    b += zeta + b"\r\n--" + inner.encode()
    b += b'\r\nContent-Disposition: attachment; filename="alpha.txt"\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nContent-Encoding: gzip\r\n\r\n' % len(alpha_gz)
    b += alpha_gz + b"\r\n--" + inner.encode() + b"--"
    b += b"\r\n--" + outer.encode() + b"--"
    name = "open_revs_bad_digest.http" if bad_digest else "open_revs_two_atts.http"
    response(name, "200 OK", ['Content-Type: multipart/mixed; boundary="%s"' % outer], b, chunk=True)

# --- _bulk_get answered as JSON, with error entries ---
def bulk_get_json():
    small = b"tiny attachment"
    res = {"results": [
        {"id": "a", "docs": [{"ok": {"_id": "a", "_rev": "2-" + "c" * 32, "v": 1,
                                     "_revisions": {"start": 2, "ids": ["c" * 32, "d" * 32]},
                                     "_attachments": {"t.txt": {"content_type": "text/plain", "revpos": 2,
                                                                "digest": md5(small), "length": len(small),
                                                                "data": base64.b64encode(small).decode()}}}}]},
        {"id": "gone", "docs": [{"error": {"id": "gone", "rev": "1-" + "e" * 32, "error": "not_found", "reason": "missing"}}]},
        {"id": "b", "docs": [{"ok": {"_id": "b", "_rev": "1-" + "f" * 32, "_deleted": True,
                                     "_revisions": {"start": 1, "ids": ["f" * 32]}}},
                             {"error": {"id": "b", "rev": "1-" + "0" * 32, "error": "forbidden", "reason": "no access"}}]},
    ]}
    response("bulk_get_json.http", "200 OK", ["Content-Type: application/json"], js(res) + b"\n", chunk=True)

# --- _bulk_get answered as multipart/mixed (send_docs_multipart_bulk_get) ---
def bulk_get_mixed():
    # CouchDB prefixes both uuids with "--"; the outer one is quoted in the
    # response's Content-Type, the inner one is not
    outer = "--e0b5d3d1ac5a4dc0b6f4a2f2c7d1b3a9"
    inner = "--1a2b3c4d5e6f40718293a4b5c6d7e8f9"
    data = b"attachment bytes of doc x\n" * 3
    docx = {"_id": "x", "_rev": "1-" + "1" * 32, "_revisions": {"start": 1, "ids": ["1" * 32]},
            "_attachments": {"x.txt": {"content_type": "text/plain", "revpos": 1, "digest": md5(data),
                                       "length": len(data), "follows": True}}}
    docy = {"_id": "y", "_rev": "1-" + "2" * 32, "_revisions": {"start": 1, "ids": ["2" * 32]}, "n": 2}
    # all attachments are stubs: announced as multipart/related, sent as bare JSON
    docz = {"_id": "z", "_rev": "2-" + "3" * 32, "_revisions": {"start": 2, "ids": ["3" * 32, "4" * 32]},
            "_attachments": {"s.txt": {"content_type": "text/plain", "revpos": 1, "digest": md5(b"s"), "length": 1, "stub": True}}}
    b = b""
    b += b"\r\n--" + outer.encode() + b"\r\nX-Doc-Id: x\r\nX-Rev-Id: " + docx["_rev"].encode()
    b += b"\r\nContent-Type: multipart/related; boundary=" + inner.encode() + b"\r\n\r\n"
    b += b"--" + inner.encode() + b"\r\nContent-Type: application/json\r\n\r\n" + js(docx) + b"\r\n--" + inner.encode()
    b += b'\r\nContent-Disposition: attachment; filename="x.txt"\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n' % len(data)
    b += data + b"\r\n--" + inner.encode() + b"--"
    b += b"\r\n--" + outer.encode() + b"\r\nContent-Type: application/json\r\n\r\n" + js(docy)
    b += b"\r\n--" + outer.encode() + b'\r\nContent-Type: application/json; error="true"\r\n\r\n'
    b += js({"rev": "1-" + "5" * 32, "error": "not_found", "reason": "missing"})
    b += b"\r\n--" + outer.encode() + b"\r\nX-Doc-Id: z\r\nX-Rev-Id: " + docz["_rev"].encode()
    b += b"\r\nContent-Type: multipart/related; boundary=" + inner.encode() + b"\r\n\r\n" + js(docz)
    b += b"\r\n--" + outer.encode() + b"--\r\n"
    response("bulk_get_mixed.http", "200 OK", ['Content-Type: multipart/mixed; boundary="%s"' % outer], b, chunk=True)

SEQ = lambda n: "%d-g1AAAAG3eJzLYWBgYMlgTmGQT0lKzi9KdUhJMtbLSs1LLUst0k3KTcpNy8xL" % n

def changes():
    rows = [{"seq": SEQ(1), "id": "a", "changes": [{"rev": "1-" + "a" * 32}]},
            {"seq": SEQ(2), "id": "_design/app", "changes": [{"rev": "1-" + "b" * 32}]},
            {"seq": SEQ(3), "id": "b", "changes": [{"rev": "2-" + "c" * 32}, {"rev": "2-" + "d" * 32}], "deleted": True},
            {"seq": SEQ(34), "id": "caf\u00e9/+?#%", "changes": [{"rev": "1-" + "e" * 32}]}]
    # CouchDB 3 separates rows with ",\r\n"
    body = b'{"results":[\n' + b",\r\n".join(js(r) for r in rows) + b'\n],\n"last_seq":"' + SEQ(34).encode() + b'","pending":0}\n'
    response("changes_normal.http", "200 OK", ["Content-Type: application/json"], body, chunk=True)
    cont = b"".join(js(r) + b"\n" for r in rows[:2]) + b"\n\n" + js(rows[2]) + b"\n\n" + js(rows[3]) + b"\n"
    cont += b'{"last_seq":"' + SEQ(34).encode() + b'","pending":0}\n'
    response("changes_continuous.http", "200 OK", ["Content-Type: application/json"], cont, chunk=True)
    # the connection drops in the middle of the third row
    response("changes_truncated.http", "200 OK", ["Content-Type: application/json"], body, cut=len(body) * 2 // 3)
    response("changes_garbled.http", "200 OK", ["Content-Type: application/json"],
             b'{"results":[\n' + js(rows[0]) + b',\n{"seq":"2-g1AA","id":"b","changes":[{"rev":}]\n],"last_seq":"2-g1AA"}\n')
    response("changes_empty.http", "200 OK", ["Content-Type: application/json"],
             b'{"results":[\n\n],\n"last_seq":"' + SEQ(34).encode() + b'","pending":0}\n', chunk=True)

def misc():
    info = {"instance_start_time": "0", "db_name": "source", "purge_seq": "0-g1AAAABPeJzLYWBgYMpgTmEQTM4vTc5ISXLIyU9OzMnILy7JAUklMiTV", "update_seq": SEQ(34),
            "sizes": {"file": 83456, "external": 1234, "active": 5678},
            "props": {}, "doc_del_count": 1, "doc_count": 3, "disk_format_version": 8, "compact_running": False,
            "cluster": {"q": 2, "n": 1, "w": 1, "r": 1}}
    response("info.http", "200 OK", ["Content-Type: application/json"], js(info) + b"\n")
    response("info_401.http", "401 Unauthorized", ["Content-Type: application/json", 'WWW-Authenticate: Basic realm="server"'],
             js({"error": "unauthorized", "reason": "Name or password is incorrect."}) + b"\n")
    response("info_403.http", "403 Forbidden", ["Content-Type: application/json"],
             js({"error": "forbidden", "reason": "You are not allowed to access this db."}) + b"\n")
    response("info_404.http", "404 Object Not Found", ["Content-Type: application/json"],
             js({"error": "not_found", "reason": "Database does not exist."}) + b"\n")
    response("error_500.http", "500 Internal Server Error", ["Content-Type: application/json"],
             js({"error": "unknown_error", "reason": "function_clause", "ref": 1234567890}) + b"\n")
    response("error_429.http", "429 Too Many Requests", ["Content-Type: application/json", "Retry-After: 1"],
             js({"error": "too_many_requests", "reason": "You've exceeded your current limit of 5 requests per second for query class. Please try later."}) + b"\n")
    response("malformed_json.http", "200 OK", ["Content-Type: application/json"], b'{"db_name":"source","update_seq":')
    rd = {"a": {"missing": ["2-" + "c" * 32]}, "b": {"missing": ["3-" + "9" * 32], "possible_ancestors": ["2-" + "c" * 32]}}
    response("revs_diff.http", "200 OK", ["Content-Type: application/json"], js(rd) + b"\n")
    # CouchDB 3 answers _bulk_docs new_edits=false with the failures only
    bd = [{"id": "LambStew", "rev": "1-34c318924a8f327223eed702ddfdc66d", "error": "forbidden", "reason": "sorry"}]
    response("bulk_docs_errors.http", "201 Created", ["Content-Type: application/json"], js(bd) + b"\n")
    response("bulk_docs_ok.http", "201 Created", ["Content-Type: application/json"], b"[]\n")
    response("local_404.http", "404 Object Not Found", ["Content-Type: application/json"],
             js({"error": "not_found", "reason": "missing"}) + b"\n")
    response("bulk_get_405.http", "405 Method Not Allowed", ["Content-Type: application/json", "Allow: GET,HEAD"],
             js({"error": "method_not_allowed", "reason": "Only GET,HEAD allowed"}) + b"\n")
    response("ensure_full_commit.http", "201 Created", ["Content-Type: application/json"],
             js({"ok": True, "instance_start_time": "0"}) + b"\n")

open_revs_mixed()
open_revs_two_atts()
open_revs_two_atts(bad_digest=True)
bulk_get_json()
bulk_get_mixed()
changes()
misc()
