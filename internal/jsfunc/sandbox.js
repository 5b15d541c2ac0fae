// The sandbox every design function runs in: CouchDB's query-server
// globals (emit, log, sum, toJSON, isArray, require) and the entry points
// package jsfunc calls. Values cross as JSON text; every entry point
// returns a JSON string and never throws, so the Go side sees a thrown
// value as it was thrown.
"use strict";
var __emits = null, __logs = [];
function emit(key, value) {
  if (__emits === null) throw new Error("emit is only available in map functions");
  __emits.push([key === undefined ? null : key, value === undefined ? null : value]);
}
function log(message) {
  __logs.push(typeof message === "string" ? message : JSON.stringify(message));
}
function sum(values) {
  var s = 0;
  for (var i = 0; i < values.length; i++) s += values[i];
  return s;
}
function toJSON(value) { return JSON.stringify(value); }
function isArray(value) { return Array.isArray(value); }

// __fatal rethrows what the engine throws when it runs out of memory:
// that escapes the sandbox, and the Go side closes the runtime.
function __fatal(e) {
  if (e === null || (e instanceof InternalError && e.message === "out of memory")) throw e;
}

// __thrown turns a thrown value into the {error, reason} CouchDB answers.
function __thrown(e) {
  __fatal(e);
  if (e && typeof e === "object" && !(e instanceof Error)) {
    if (e.forbidden !== undefined) return { error: "forbidden", reason: e.forbidden };
    if (e.unauthorized !== undefined) return { error: "unauthorized", reason: e.unauthorized };
    if (Array.isArray(e) && e.length === 3 && e[0] === "error") return { error: e[1], reason: String(e[2]) };
    if (e.error !== undefined) return { error: String(e.error), reason: e.reason === undefined ? "" : e.reason };
    return { error: "unnamed_error", reason: JSON.stringify(e) };
  }
  if (e instanceof Error) return { error: e.name, reason: e.message };
  return { error: "unnamed_error", reason: String(e) };
}

// Compiled functions, keyed by their source: a runtime compiles each
// function once. A function is the value of the expression its source is,
// compiled as CouchDB 3.5 compiles it (its syntax errors read the same).
var __compiled = Object.create(null);
var __f;
function __compile(source) {
  var f = __compiled[source];
  if (f !== undefined) return f;
  var src = String(source).trim().replace(/;+\s*$/, "");
  try {
    f = (0, eval)("__f = " + src);
  } catch (e) {
    if (e instanceof SyntaxError) throw ["error", "compilation_error", e.name + ": " + e.message + " (" + source + ")"];
    throw e;
  }
  if (typeof f !== "function") throw ["error", "compilation_error", "Expression does not eval to a function. (" + source + ")"];
  __compiled[source] = f;
  return f;
}

// require is what functions call to load CommonJS modules; __useRoot
// points it at the part of the design document they may load.
var require;
var __rootJSON = null, __rootRequire = null;
function __useRoot(libJSON) {
  // The same design document comes with every call: parse it once, as
  // CouchDB's query server keeps the design documents it was given.
  if (libJSON !== __rootJSON) {
    var root = JSON.parse(libJSON);
    var modules = Object.create(null);
    __rootRequire = function (name) { return __require(root, modules, "", name); };
    __rootJSON = libJSON;
  }
  require = __rootRequire;
}
var __ddocJSON = null, __ddoc = null;
// __designDoc returns the parsed design document, parsed once per text.
function __designDoc(ddocJSON) {
  if (ddocJSON !== __ddocJSON) {
    __ddoc = JSON.parse(ddocJSON);
    __ddocJSON = ddocJSON;
  }
  return __ddoc;
}

// __require resolves a CommonJS module path (relative to the requiring
// module's id) within root, the part of the design document the function
// may load: views.lib for map functions, the whole document otherwise.
function __require(root, modules, from, name) {
  var parts = name.charAt(0) === "." ? from.split("/").slice(0, -1) : [];
  var names = name.split("/");
  for (var i = 0; i < names.length; i++) {
    if (names[i] === "." || names[i] === "") continue;
    if (names[i] === "..") {
      if (parts.length === 0) throw ["error", "invalid_require_path", "Object has no parent " + JSON.stringify(name)];
      parts.pop();
    } else parts.push(names[i]);
  }
  var id = parts.join("/");
  if (id in modules) return modules[id].exports;
  var cur = root;
  for (var j = 0; j < parts.length; j++) {
    if (cur === null || typeof cur !== "object" || cur[parts[j]] === undefined) {
      throw ["error", "invalid_require_path", "Object has no property \"" + parts[j] + "\". " + JSON.stringify(cur)];
    }
    cur = cur[parts[j]];
  }
  if (typeof cur !== "string") throw ["error", "invalid_require_path", "Must require a JavaScript string, not: " + typeof cur];
  var module = { id: id, exports: {} };
  modules[id] = module;
  var body = (0, eval)("(function (module, exports, require) { " + cur + "\n})");
  body(module, module.exports, function (n) { return __require(root, modules, id, n); });
  return module.exports;
}

function __result(ok) {
  // The common answer needs no encoding (runtime.go's okTrue).
  if (ok === true && __logs.length === 0) return '{"ok":true}';
  var r = { ok: ok }; if (__logs.length) r.log = __logs; __logs = []; return JSON.stringify(r);
}
function __failure(e) { var r = __thrown(e); if (__logs.length) r.log = __logs; __logs = []; return JSON.stringify(r); }

var __maps = [], __mapRoot = "{}", __mapNames = null, __mapAbsent = null;
// __check compiles a function and answers whether it compiled.
function __check(source) {
  try { __compile(source); return __result(true); } catch (e) { return __failure(e); }
}
// __setMaps compiles the map functions later __map calls run; ok is
// their texts (project.go reads which members of the document they use).
function __setMaps(sourcesJSON, libJSON) {
  try {
    var sources = JSON.parse(sourcesJSON), texts = [];
    __maps = [];
    __mapRoot = libJSON;
    __mapNames = __mapAbsent = null;
    for (var i = 0; i < sources.length; i++) {
      __maps.push(__compile(sources[i]));
      texts.push(Function.prototype.toString.call(__maps[i]));
    }
    return __result(texts);
  } catch (e) { return __failure(e); }
}
// __setMapMembers names the members of the document Go sends alone to
// the map functions (__map with proj set).
function __setMapMembers(namesJSON) {
  __mapNames = JSON.parse(namesJSON);
  __mapAbsent = __absentProto(__mapNames, true);
  return __result(true);
}
// __freeze freezes a value and everything in it: CouchDB's map functions
// get the document so (an assignment is ignored, or a TypeError in strict
// code), and all of them the same one.
function __freeze(v) {
  Object.freeze(v);
  for (var k in v) {
    var m = v[k];
    if (typeof m === "object" && m !== null) __freeze(m);
  }
  return v;
}
// __map runs every map function on one document: one list of [key, value]
// per function; a function that throws emits nothing for that document,
// as in CouchDB, and its error is logged. With proj, the document holds
// only the members __setMapMembers named (see __validate for the answers
// asking for all of it).
function __map(docJSON, proj) {
  var out = [];
  try {
    __useRoot(__mapRoot);
    if (proj) {
      for (var k = 0; k < __mapNames.length; k++) if (__mapNames[k] in __objectProto) return __fullAnswer;
    }
    var doc = JSON.parse(docJSON);
    if (proj) Object.setPrototypeOf(doc, __mapAbsent);
    __freeze(doc);
    __needFull = false;
    for (var i = 0; i < __maps.length && !__needFull; i++) {
      __emits = [];
      try { __maps[i](doc); out.push(__emits); } catch (e) {
        if (__needFull) break;
        out.push([]);
        var t = __thrown(e);
        __logs.push("function raised exception (" + t.error + ": " + t.reason + ") with doc._id " + doc._id);
      }
    }
    __emits = null;
    if (__needFull) { __logs = []; return __freshAnswer; }
    return __result(out);
  } catch (e) {
    __emits = null;
    if (__needFull) { __logs = []; return __freshAnswer; }
    return __failure(e);
  }
}
// __reduce runs one reduce function.
function __reduce(source, libJSON, keysJSON, valuesJSON, rereduce) {
  try {
    var f = __compile(source);
    __useRoot(libJSON);
    var r = f(JSON.parse(keysJSON), JSON.parse(valuesJSON), rereduce);
    return __result(r === undefined ? null : r);
  } catch (e) { return __failure(e); }
}
// Validators are registered once per runtime (__setValidator: the function
// compiled, its design document parsed, its require bound), then called by
// number (__validate) with only the arguments the function can see.
var __validators = [];
// __argsSeen is how many of (newDoc, oldDoc, userCtx, secObj) f can see:
// its declared parameters when its own text is a plain function whose
// parameter list has no defaults, rest or destructuring and whose body
// reads neither arguments nor eval (QuickJS has no f.arguments); else all
// four. The ones it cannot see need not be sent.
function __argsSeen(f) {
  var t = Function.prototype.toString.call(f);
  var brace = t.indexOf("{"), head = brace < 0 ? "" : t.slice(0, brace);
  if (!/^function\b/.test(head) || head.indexOf(")") < 0 || /=|\.\.\./.test(head) || /\barguments\b|\beval\b/.test(t)) return 4;
  return Math.max(0, Math.min(4, f.length));
}
// __setValidator registers a validate_doc_update; ok is [number, args
// seen, the function's text] (project.go reads which members it uses).
function __setValidator(source, ddocJSON) {
  try {
    var f = __compile(source);
    __useRoot(ddocJSON);
    __validators.push({ f: f, ddoc: __designDoc(ddocJSON), require: require, absent: [null, null, null, null] });
    return __result([__validators.length - 1, __argsSeen(f), Function.prototype.toString.call(f)]);
  } catch (e) { return __failure(e); }
}
function __resetValidators() { __validators = []; return __result(true); }

// A document sent with only the members a validator names (project.go)
// gets a prototype with an accessor for each of them: it answers for a
// member the document lacks as Object.prototype would. When
// Object.prototype has one of those names (what it holds could see the
// object itself), the whole documents are needed: __validate asks for them
// before the function runs, or, when the name appeared while it ran, stops
// it (__needFull) and asks for them in a fresh engine, where the
// function's own changes to this one are undone.
var __objectProto = Object.prototype, __needFull = false, __fullMarker = {};
// frozen is for a map function's document: an assignment to a member it
// lacks is ignored there (map functions are sloppy code when cut, see
// project.go).
function __absentProto(names, frozen) {
  var p = {};
  names.forEach(function (name) {
    Object.defineProperty(p, name, {
      get: function () {
        if (name in __objectProto) { __needFull = true; throw __fullMarker; }
        return undefined;
      },
      set: function (value) {
        if (name in __objectProto) { __needFull = true; throw __fullMarker; }
        if (!frozen) Object.defineProperty(this, name, { value: value, writable: true, enumerable: true, configurable: true });
      }
    });
  });
  return p;
}
// __setMembers gives validator n the member names of each argument that
// Go sends alone (names or null, for each of the four).
function __setMembers(n, namesJSON) {
  var names = JSON.parse(namesJSON), v = __validators[n];
  v.names = [];
  for (var i = 0; i < 4; i++) {
    v.absent[i] = names[i] === null ? null : __absentProto(names[i]);
    if (names[i] !== null) v.names = v.names.concat(names[i]);
  }
  return __result(true);
}
var __fullAnswer = '{"full":true}', __freshAnswer = '{"full":"fresh"}';
// __validate runs validator n on argsJSON, [newDoc, oldDoc, userCtx,
// secObj] or its first elements (one parse, not four); bit i of proj says
// that argument i holds only the members the function names (see above
// for the answers asking for them all). ok is true
// when the write may go on. What it throws is answered as CouchDB 3.5
// answers it: forbidden and unauthorized as given, a string or another
// object's first value as unknown_error, an Error by its name with
// CouchDB's empty reason.
function __validate(n, argsJSON, proj) {
  var v = __validators[n];
  try {
    require = v.require;
    if (proj !== 0) {
      for (var k = 0; k < v.names.length; k++) if (v.names[k] in __objectProto) return __fullAnswer;
    }
    var a = JSON.parse(argsJSON);
    __needFull = false;
    for (var i = 0; proj !== 0; i++, proj >>= 1) if (proj & 1) Object.setPrototypeOf(a[i], v.absent[i]);
    v.f.call(v.ddoc, a[0], a[1], a[2], a[3]);
    if (__needFull) { __logs = []; return __freshAnswer; }
    return __result(true);
  } catch (e) {
    __fatal(e);
    if (__needFull) { __logs = []; return __freshAnswer; }
    var r;
    if (e instanceof Error) r = { error: e.name, reason: "{[]}" };
    else if (e && typeof e === "object" && !Array.isArray(e)) {
      if (e.forbidden !== undefined) r = { error: "forbidden", reason: e.forbidden };
      else if (e.unauthorized !== undefined) r = { error: "unauthorized", reason: e.unauthorized };
      else { var ks = Object.keys(e); r = { error: "unknown_error", reason: ks.length ? e[ks[0]] : "" }; }
    } else r = { error: "unknown_error", reason: String(e) };
    if (__logs.length) r.log = __logs;
    __logs = [];
    return JSON.stringify(r);
  }
}
// Filters' cut arguments (project.go), by source: the accessors for the
// members of doc and of req a filter names, and all those names.
var __filterCuts = Object.create(null);
// __filterText compiles a filter and answers its text.
function __filterText(source) {
  try { return __result(Function.prototype.toString.call(__compile(source))); } catch (e) { return __failure(e); }
}
// __setFilterMembers names the members of doc and req Go sends alone to
// filter source ([names or null, names or null]).
function __setFilterMembers(source, namesJSON) {
  var names = JSON.parse(namesJSON), c = { absent: [null, null], names: [] };
  for (var i = 0; i < 2; i++) {
    if (names[i] === null) continue;
    c.absent[i] = __absentProto(names[i]);
    c.names = c.names.concat(names[i]);
  }
  __filterCuts[source] = c;
  return __result(true);
}
function __resetFilters() { __filterCuts = Object.create(null); return __result(true); }
// __filter runs a filter function over documents: one boolean each. Bit 0
// of proj says the documents hold only the members it names, bit 1 that
// req does (see __validate for the answers asking for all of them).
function __filter(source, ddocJSON, docsJSON, reqJSON, proj) {
  try {
    var ddoc = __designDoc(ddocJSON);
    var f = __compile(source);
    __useRoot(ddocJSON);
    var c = null;
    if (proj) {
      c = __filterCuts[source];
      if (c === undefined) return __fullAnswer;
      for (var k = 0; k < c.names.length; k++) if (c.names[k] in __objectProto) return __fullAnswer;
    }
    var docs = JSON.parse(docsJSON), req = JSON.parse(reqJSON), out = [];
    if (proj & 2) Object.setPrototypeOf(req, c.absent[1]);
    __needFull = false;
    for (var i = 0; i < docs.length && !__needFull; i++) {
      if (proj & 1) Object.setPrototypeOf(docs[i], c.absent[0]);
      out.push(!!f.call(ddoc, docs[i], req));
    }
    if (__needFull) { __logs = []; return __freshAnswer; }
    return __result(out);
  } catch (e) {
    if (__needFull) { __logs = []; return __freshAnswer; }
    return __failure(e);
  }
}
