#!/usr/bin/env python3
"""Records Apache CouchDB 3.5's answers to the scripted requests in
requests.json, in the JSONL schema of testdata/couchdb35/exchanges (see its
README), against a CouchDB given as COUCH=http://admin:pw@127.0.0.1:5984.

A script that names a "db" gets it created afresh and loaded with
testdata/couchdb35/dataset.ndjson as the corpus README says (one line per
request); its paths are relative to that database. A script with
"absolute": true loads nothing and its paths are absolute.

Beyond method/path/body/headers/note, a step may carry (see README.md):
  as          who sends it: absent = the admin of COUCH; null = anonymous;
              "alice" = Basic with the password in the script's "users";
              ["alice", "wrong"] = Basic with that password
  cookie      "slot": send the AuthSession saved in that slot (and no Basic
              unless "as" says so); {"forge": {...}} builds one (forge_cookie)
  save_cookie "slot": keep the AuthSession of the answer's Set-Cookie
  jwt         {"key": "hmac"|"hmac-wrong"|"rsa"|"ec"|"rsa-public-as-hmac"|"none",
              "alg": ..., "claims": {...}, "header": {...}, "tamper": bool}:
              send a bearer token minted now; a claim value "+N"/"-N" is now+N
  form        {...}: a form-encoded body
  save        {"var": "field"}: keep a top-level field of the answer's JSON;
              "{{var}}" in path, body and headers is replaced by it ("{{run}}"
              is a token of this run, for names the lockout must not know)
  save_header {"var": "Header"}: keep a header of the answer the same way
  sleep       seconds to wait before sending
  wait        {"path": ..., "until": "present"|"absent", "value": ...}: poll
              (as admin, at most "seconds", 20) until the JSON list at path
              has or lacks value, before sending; "until": "equals" with
              "field" (dotted) compares a field of the JSON answer, "until":
              "status" the status
  record      false: send but leave it out of the recording (setup)
  ignore_404  with record false: a 404 answer is fine
  op          "ensure_deleted": delete the document or database at path if
              it exists (as admin, never recorded); "purge": purge every
              leaf of the document at path, so it is created at 1-
Secrets are masked in the recording (Authorization, Cookie, Set-Cookie
values); each exchange keeps the step's "auth" spec so a replay can send
the same credentials. Nothing here builds CouchDB: it must be running
already; a script changes its configuration only through its own recorded
/_node/_local/_config steps (cors.json, auth-users-open.json), and undoes it.
"""
import base64, hashlib, hmac, json, os, re, sys, time, urllib.parse, urllib.request, urllib.error

couch = os.environ["COUCH"].rstrip("/")
u = urllib.parse.urlsplit(couch)
auth = "Basic " + base64.b64encode(f"{u.username}:{u.password}".encode()).decode()
base = f"{u.scheme}://{u.hostname}:{u.port}"
here = os.path.dirname(os.path.abspath(__file__))
dataset = os.path.join(here, "..", "couchdb35", "dataset.ndjson")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


opener = urllib.request.build_opener(NoRedirect)


def send(method, path, body=None, headers=None, authz=auth):
    h = {"Accept": "application/json"}
    if authz:
        h["Authorization"] = authz
    data = None
    if body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    req = urllib.request.Request(base + path, data=data, method=method, headers=h)
    try:
        with opener.open(req, timeout=120) as r:
            return r.status, r.reason, r.headers, r.read(), h, data
    except urllib.error.HTTPError as e:
        return e.code, e.reason, e.headers, e.read(), h, data


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


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def rel_time(v, now):
    if isinstance(v, str) and re.fullmatch(r"[+-]\d+", v):
        return now + int(v)
    return v


def mint_jwt(spec, keys):
    """A JWT as the step's spec says; the keys are the script's test fixtures."""
    now = int(time.time())
    claims = {k: rel_time(v, now) for k, v in spec.get("claims", {}).items()}
    alg = spec.get("alg", "HS256")
    header = {"alg": alg, "typ": "JWT"}
    header.update(spec.get("header", {}))
    signing = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "." +
               b64url(json.dumps(claims, separators=(",", ":")).encode())).encode()
    kind = spec.get("key", "hmac")
    digest = {"256": hashlib.sha256, "384": hashlib.sha384, "512": hashlib.sha512}.get(alg[-3:], hashlib.sha256)
    if kind == "none":
        sig = b""
    elif kind == "hmac":
        sig = hmac.new(keys["hmac"].encode(), signing, digest).digest()
    elif kind == "hmac-wrong":
        sig = hmac.new(b"not-the-secret", signing, digest).digest()
    elif kind == "rsa-public-as-hmac":
        sig = hmac.new(open(os.path.join(here, keys["rsa_public"]), "rb").read(), signing, digest).digest()
    else:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, padding, utils
        pem = open(os.path.join(here, keys[kind + "_private"]), "rb").read()
        key = serialization.load_pem_private_key(pem, None)
        h = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[alg[-3:]]
        if kind == "rsa":
            sig = key.sign(signing, padding.PKCS1v15(), h)
        else:
            r, s = utils.decode_dss_signature(key.sign(signing, ec.ECDSA(h)))
            sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    token = signing.decode() + "." + b64url(sig)
    if spec.get("tamper"):
        token = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    return token


def forge_cookie(spec, users_salt):
    """An AuthSession as CouchDB builds it: base64url(name:HEXTIME:hmac),
    the HMAC keyed with the server secret followed by the user's salt."""
    now = int(time.time())
    name = spec["user"]
    t = format(rel_time(spec.get("time", "+0"), now), "X")
    if "raw" in spec:
        return b64url(spec["raw"].encode())
    key = (spec["secret"] + users_salt(spec.get("salt_of", name))).encode()
    mac = hmac.new(key, f"{name}:{t}".encode(), hashlib.sha256).digest()
    return b64url(f"{name}:{t}:".encode() + mac)


def fill(v, saved):
    if isinstance(v, str):
        return re.sub(r"\{\{(\w+)\}\}", lambda m: str(saved[m.group(1)]), v)
    return v


def mask_cookie(value):
    def one(m):
        try:
            name = base64.urlsafe_b64decode(m.group(1) + "=" * (-len(m.group(1)) % 4)).split(b":")[0].decode()
            return f"AuthSession=<masked:{name}>"
        except Exception:
            return "AuthSession=<masked>"
    return re.sub(r"AuthSession=([A-Za-z0-9_\-]+)", one, value)


def main():
    script = json.load(open(os.path.join(here, sys.argv[1])))
    users = script.get("users", {})
    keys = script.get("jwt_keys", {})
    if script.get("absolute"):
        prefix = ""
    else:
        prefix = "/" + script["db"]
        load(script["db"])
        quiesce(script["db"])
    cookies, saved = {}, {"run": format(int(time.time()) % 0xFFFFFF, "06x")}

    def users_salt(name):
        d = json.loads(send("GET", f"/_users/org.couchdb.user:{name}")[3])
        return d["salt"]

    out = []
    t0 = time.time()
    for step in script["requests"]:
        if step.get("op") == "ensure_deleted":
            st, _, _, b, _, _ = send("GET", step["path"])
            if st == 200:
                rev = json.loads(b).get("_rev")
                q = "?rev=" + rev if rev else ""
                st = send("DELETE", step["path"] + q)[0]
                assert st in (200, 202), (step, st)
            continue
        if step.get("op") == "purge":
            db, _, docid = step["path"].lstrip("/").partition("/")
            st, _, _, b, _, _ = send("GET", step["path"] + "?open_revs=all")
            revs = [r.get("ok", {}).get("_rev") for r in json.loads(b)] if st == 200 else []
            revs = [r for r in revs if r]
            if revs:
                st = send("POST", f"/{db}/_purge", {urllib.parse.unquote(docid): revs})[0]
                assert st in (201, 202), (step, st)
            continue
        if "sleep" in step:
            time.sleep(step["sleep"])
        if "wait" in step:
            w = step["wait"]
            for _ in range(int(w.get("seconds", 20) * 10)):
                st, _, _, b, _, _ = send("GET", fill(w["path"], saved))
                until = w.get("until", "present")
                if until == "status":
                    done = st == w["value"]
                elif until == "equals":
                    j = json.loads(b) if st == 200 else None
                    for part in w["field"].split("."):
                        if isinstance(j, list) and part.isdigit():
                            j = j[int(part)] if int(part) < len(j) else None
                        else:
                            j = j.get(part) if isinstance(j, dict) else None
                    done = j == w["value"]
                else:
                    present = st == 200 and w["value"] in json.loads(b)
                    done = present == (until == "present")
                if done:
                    break
                time.sleep(0.1)
        headers = {k: fill(v, saved) for k, v in step.get("headers", {}).items()}
        authz = auth
        spec = {}
        if "as" in step:
            who = step["as"]
            spec["as"] = who
            if who is None:
                authz = None
            elif isinstance(who, list):
                authz = "Basic " + base64.b64encode(f"{who[0]}:{who[1]}".encode()).decode()
            else:
                authz = "Basic " + base64.b64encode(f"{who}:{users[who]}".encode()).decode()
        if "cookie" in step:
            c = step["cookie"]
            spec["cookie"] = c
            if "as" not in step:
                authz = None
            value = forge_cookie(c["forge"], users_salt) if isinstance(c, dict) else cookies[c]
            headers["Cookie"] = "AuthSession=" + value
        if "jwt" in step:
            spec["jwt"] = step["jwt"]
            if "as" not in step:
                authz = None
            headers["Authorization"] = "Bearer " + mint_jwt(step["jwt"], keys)
        body = step.get("body")
        if "form" in step:
            body = urllib.parse.urlencode(step["form"])
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        raw_body = body if isinstance(body, str) or body is None else json.dumps(body)
        raw_body = fill(raw_body, saved)
        path = prefix + fill(step["path"], saved)
        start = time.time()
        status, reason, rhm, rb, qh, data = send(step["method"], path, raw_body, headers, authz)
        if "save_cookie" in step:
            for sc in rhm.get_all("Set-Cookie") or []:
                m = re.match(r"AuthSession=([^;]*)", sc)
                if m:
                    cookies[step["save_cookie"]] = m.group(1)
        if "save" in step:
            try:
                j = json.loads(rb)
                for var, field in step["save"].items():
                    if isinstance(j, dict) and field in j:
                        saved[var] = j[field]
            except ValueError:
                pass
        for var, name in step.get("save_header", {}).items():
            if rhm.get(name) is not None:
                saved[var] = rhm.get(name)
        if step.get("record") is False:
            assert status < 400 or (status == 404 and step.get("ignore_404")), (step, status, rb)
            continue
        p, _, q = path.partition("?")
        qh = dict(qh)
        if "Authorization" in qh:
            scheme = qh["Authorization"].split(" ")[0]
            qh["Authorization"] = scheme + " <masked>"
        if "Cookie" in qh:
            qh["Cookie"] = mask_cookie(qh["Cookie"])
        rh = {}
        for k in rhm.keys():
            if k in ("Date", "Server", "X-Couch-Request-ID", "X-CouchDB-Body-Time"):
                continue
            vals = rhm.get_all(k)
            if k == "Set-Cookie":
                vals = [mask_cookie(v) for v in vals]
            rh[k] = vals[0] if len(vals) == 1 else vals
        try:
            text, b64 = rb.decode("utf-8"), False
        except UnicodeDecodeError:
            text, b64 = base64.b64encode(rb).decode(), True
        e = {
            "seq": len(out) + 1, "conn": 1, "t_start_ms": round((start - t0) * 1000, 1),
            "duration_ms": round((time.time() - start) * 1000, 1), "ttfb_ms": 0,
            "method": step["method"], "path": p,
            "path_segments": [urllib.parse.unquote(s) for s in p.strip("/").split("/")],
            "query": q, "query_params": urllib.parse.parse_qsl(q, keep_blank_values=True),
            "req_headers": qh, "note": step["note"],
            "req_body": raw_body or "", "req_body_base64": False, "req_body_size": len(data or b""),
            "status": status, "reason": reason, "resp_headers": rh,
            "resp_body": text, "resp_body_base64": b64, "resp_body_size": len(rb),
        }
        if script.get("absolute") or spec:
            e["auth"] = spec or {"as": "admin"}
        out.append(e)
    name = os.path.splitext(sys.argv[1])[0] + ".jsonl"
    with open(os.path.join(here, name), "w") as f:
        for e in out:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    print(f"{name}: {len(out)} exchanges")


main()
