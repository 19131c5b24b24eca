/**
 * Source text of the small programs that host a solution inside the sandbox (function mode).
 *
 * They do not grade. They read a list of expressions on stdin (the test calls: inputs only, never
 * an expected value), load the solution, evaluate each expression and write one line per
 * expression on file descriptor 3: `{"i": k, "v": <typed value>}` or `{"i": k, "error": "..."}`.
 * An expression may come as `{"x": expr, "own": [names]}`: each name must then be the solution's
 * own definition (a function named like a builtin or a JS global, `def pow`, `function parseInt`),
 * else the answer is an error — so a test of a builtin-named function is never answered by the
 * builtin. `{"x": ..., "anyOwn": [names]}` (a call test) needs at least one of the names to be
 * defined by the solution, so a call of builtins alone (`pow(2, 10)`) is never answered by them.
 * JS: a value that is a Promise is not awaited (it is an opaque "Promise"); an expression
 * `{"x": ..., "await": true}` (a test that wrote `await f()`) is awaited explicitly.
 * The comparison happens outside (run-tests.ts, judge.ts). The program shares a process with the
 * solution, so anything it writes is only ever treated as the solution's answer: a solution that
 * writes its own lines gains nothing it could not get by returning those values.
 *
 * Typed values (the wire format, decoded by values.ts): JSON null, booleans, finite numbers,
 * strings and arrays (Python lists) as themselves; `{"$": tag, "v": ...}` for "int" (beyond
 * ±2^53, decimal digits), "float" ("nan", "inf", "-inf", and the repr of an integral float or -0,
 * which plain JSON would turn into an int: `2.0` stays a float, `-0.0` keeps its sign), "tuple", "dict" ([[key, value], …]),
 * "set", "frozenset", "bytes" (hex), "bytearray", "complex" ([re, im]), "undefined" (JS), and
 * `{"$": "opaque", "type": name}` for anything else (user objects: they never compare equal).
 * Subclasses of the built-in data types are encoded by their underlying data through the base
 * type's own methods, so an overridden __eq__, __iter__ or toJSON never reaches the grader.
 */

/** Python encoder of typed values (shared by the runner and, for symmetry, documented above). */
const PY_ENCODER = String.raw`
def _enc(v, d=0):
    if d > 200:
        return {"$": "opaque", "type": "nested too deeply"}
    t = type(v)
    if v is None or t is bool:
        return v
    if issubclass(t, int):
        s = int.__repr__(v)
        n = int(s)
        return n if -(1 << 53) < n < (1 << 53) else {"$": "int", "v": s}
    if issubclass(t, float):
        x = float(float.__repr__(v))
        if x != x:
            return {"$": "float", "v": "nan"}
        if x in (float("inf"), float("-inf")):
            return {"$": "float", "v": "inf" if x > 0 else "-inf"}
        if float.is_integer(x):
            return {"$": "float", "v": float.__repr__(x)}
        return x
    if issubclass(t, str):
        return str.__str__(v)
    if issubclass(t, list):
        return [_enc(x, d + 1) for x in list.__iter__(v)]
    if issubclass(t, tuple):
        return {"$": "tuple", "v": [_enc(x, d + 1) for x in tuple.__iter__(v)]}
    if issubclass(t, dict):
        return {"$": "dict", "v": [[_enc(k, d + 1), _enc(x, d + 1)] for k, x in dict.items(v)]}
    if issubclass(t, frozenset):
        return {"$": "frozenset", "v": [_enc(x, d + 1) for x in frozenset.__iter__(v)]}
    if issubclass(t, set):
        return {"$": "set", "v": [_enc(x, d + 1) for x in set.__iter__(v)]}
    if issubclass(t, bytes):
        return {"$": "bytes", "v": bytes.hex(v)}
    if issubclass(t, bytearray):
        return {"$": "bytearray", "v": bytearray.hex(v)}
    if issubclass(t, complex):
        return {"$": "complex", "v": [_enc(complex.__getattribute__(v, "real")), _enc(complex.__getattribute__(v, "imag"))]}
    name = type.__dict__["__name__"].__get__(t)
    return {"$": "opaque", "type": str.__str__(name)[:80] if isinstance(name, str) else "?"}
`;

/**
 * Python fallback guard (only without bubblewrap): rlimits via `resource` and an audit hook
 * refusing sockets, fork/exec and writes outside the work dir. Bypassable by a determined
 * program (documented); bubblewrap does not need it.
 */
const PY_GUARD = String.raw`
def _guard(work, mem, fbytes, nproc):
    import resource
    def lim(kind, value):
        try:
            soft, hard = resource.getrlimit(kind)
            v = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (v, v))
        except Exception:
            pass
    lim(resource.RLIMIT_AS, mem)
    lim(resource.RLIMIT_FSIZE, fbytes)
    lim(resource.RLIMIT_NPROC, nproc)
    lim(resource.RLIMIT_CORE, 0)
    work = os.path.realpath(work)
    def inside(p):
        try:
            if isinstance(p, int):
                return True
            if isinstance(p, bytes):
                p = os.fsdecode(p)
            r = os.path.realpath(os.path.join(work, p))
            return r == work or r.startswith(work + os.sep) or r == "/dev/null"
        except Exception:
            return False
    block = {"os.system", "os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen",
             "pty.spawn", "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.sendto", "socket.sendmsg",
             "socket.gethostbyname", "socket.gethostbyaddr", "socket.__new__", "ctypes.dlopen", "ctypes.dlsym",
             "os.setuid", "os.setgid", "os.chroot", "sys.addaudithook"}
    path1 = {"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.utime", "shutil.rmtree",
             "os.listxattr", "os.removexattr", "os.setxattr", "shutil.copyfile", "shutil.copytree", "shutil.move"}
    path2 = {"os.rename", "os.link", "os.symlink"}
    W = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    def hook(event, args):
        if event == "open":
            path, mode, flags = args[0], args[1], args[2]
            writing = (isinstance(flags, int) and (flags & W) != 0) or (isinstance(mode, str) and any(c in mode for c in "wax+"))
            if writing and not inside(path):
                raise PermissionError("sandbox: write outside the work directory refused: %r" % (path,))
        elif event in block:
            raise PermissionError("sandbox: %s refused" % event)
        elif event in path1:
            if args and not inside(args[0]):
                raise PermissionError("sandbox: %s outside the work directory refused" % event)
        elif event in path2:
            for a in args[:2]:
                if not inside(a):
                    raise PermissionError("sandbox: %s outside the work directory refused" % event)
    sys.addaudithook(hook)
`;

/**
 * Python function-mode runner: `python3 -I -B runner.py` with stdin
 * `{"entry", "exprs": [...], "guard": null | {work, mem, fbytes, nproc}}`.
 */
export const PYTHON_RUNNER = String.raw`
import sys, os, json
_cfg = json.loads(sys.stdin.buffer.read().decode("utf-8"))
_null = os.open(os.devnull, os.O_RDWR)
os.dup2(_null, 0)
_write = os.write
_dumps = json.dumps
${PY_ENCODER}
${PY_GUARD}
if _cfg.get("guard"):
    g = _cfg["guard"]
    _guard(g["work"], g["mem"], g["fbytes"], g["nproc"])

def _emit(rec):
    data = (_dumps(rec) + "\n").encode("utf-8", "replace")
    while data:
        n = _write(3, data)
        data = data[n:]

def _msg(e):
    try:
        return (type(e).__name__ + ": " + str(e))[:300]
    except BaseException:
        return "exception"

with open(_cfg["entry"], encoding="utf-8") as f:
    _src = f.read()
sys.stdout = open(os.devnull, "w")
_g = {"__name__": "solution", "__builtins__": __builtins__}
try:
    exec(compile(_src, _cfg["entry"], "exec"), _g)
except BaseException as e:
    _emit({"load": _msg(e)})
    os._exit(0)
for _i, _x in enumerate(_cfg["exprs"]):
    try:
        if isinstance(_x, dict):
            for _n in _x.get("own", ()):
                if _n not in _g:
                    raise NameError("the solution does not define %s (the test calls the solution's own %s)" % (_n, _n))
            if "anyOwn" in _x and not any(_n in _g for _n in _x["anyOwn"]):
                raise NameError("the call uses nothing the solution defines (names: %s)" % ", ".join(_x["anyOwn"])[:200])
            _x = _x["x"]
        _v = eval(compile(_x, "<test %d>" % _i, "eval"), _g)
        _emit({"i": _i, "v": _enc(_v)})
    except BaseException as e:
        _emit({"i": _i, "error": _msg(e)})
os._exit(0)
`;

/** Python stdin/stdout guard for the fallback: `python3 -I -B guard.py <cfg-json> solution.py`. */
export const PYTHON_STDIO_GUARD = String.raw`
import sys, os, json
_cfg = json.loads(sys.argv[1])
${PY_GUARD}
_guard(_cfg["work"], _cfg["mem"], _cfg["fbytes"], _cfg["nproc"])
_entry = sys.argv[2]
sys.argv = [_entry]
with open(_entry, encoding="utf-8") as f:
    _src = f.read()
_g = {"__name__": "__main__", "__builtins__": __builtins__}
try:
    exec(compile(_src, _entry, "exec"), _g)
except SystemExit as e:
    code = e.code
    sys.stdout.flush()
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
`;

/** JavaScript encoder of typed values (runs inside the sandbox and, for expected values, in a vm context of the trusted process). */
export const JS_ENCODER = String.raw`
function __rlvrEnc(v, d) {
  d = d || 0;
  if (d > 200) return { $: "opaque", type: "nested too deeply" };
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (v === undefined) return { $: "undefined" };
  if (typeof v === "number") {
    if (Object.is(v, -0)) return { $: "float", v: "-0" };
    if (Number.isNaN(v)) return { $: "float", v: "nan" };
    if (!Number.isFinite(v)) return { $: "float", v: v > 0 ? "inf" : "-inf" };
    return v;
  }
  if (typeof v === "bigint") return { $: "int", v: v.toString() };
  if (typeof v !== "object") return { $: "opaque", type: typeof v };
  if (Array.isArray(v)) {
    const out = [];
    const n = Math.min(Number(v.length) || 0, 1e7);
    for (let i = 0; i < n; i++) out.push(__rlvrEnc(v[i], d + 1));
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto === null || proto === Object.prototype) {
    const out = [];
    for (const k of Object.keys(v)) out.push([k, __rlvrEnc(v[k], d + 1)]);
    return { $: "dict", v: out };
  }
  let name = "object";
  try { name = String(proto && proto.constructor && proto.constructor.name).slice(0, 80); } catch (e) {}
  return { $: "opaque", type: name };
}
`;

/**
 * Node function-mode runner (CommonJS): `node runner.cjs` with stdin `{"entry", "exprs": [...]}`.
 * The solution may be CommonJS (module.exports) or plain declarations; `export` keywords are
 * stripped.
 */
export const NODE_RUNNER = String.raw`
const fs = require("fs");
const vm = require("vm");
const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
const writeSync = fs.writeSync;
const stringify = JSON.stringify;
${JS_ENCODER}
const emit = (o) => { let s; try { s = stringify(o) + "\n"; } catch (e) { s = stringify({ i: o.i, error: "unencodable value" }) + "\n"; } writeSync(3, s); };
const msg = (e) => { try { return String(e).slice(0, 300); } catch (_) { return "exception"; } };
const src = fs.readFileSync(cfg.entry, "utf8").replace(/^\s*export\s+(default\s+)?/gm, "");
process.stdout.write = () => true;
console.log = console.info = console.debug = console.warn = console.error = () => {};
globalThis.module = { exports: {} };
globalThis.exports = globalThis.module.exports;
globalThis.require = require;
globalThis.assert = require("assert");
const own = new Set();
for (const x of cfg.exprs) if (x && typeof x === "object") for (const n of x.own || []) own.add(n);
const builtin = {};
for (const n of own) builtin[n] = globalThis[n];
const valueOf = (n) => { try { return vm.runInThisContext(n); } catch (e) { return undefined; } };
const before = new Map();
for (const x of cfg.exprs) if (x && typeof x === "object") for (const n of x.anyOwn || []) before.set(n, valueOf(n));
const isThenable = (v) => { try { return v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function"; } catch (e) { return true; } };
(async () => {
  try {
    vm.runInThisContext(src, { filename: cfg.entry });
    const ex = globalThis.module.exports;
    if (ex && typeof ex === "object") for (const k of Object.keys(ex)) if (!(k in globalThis) || own.has(k)) globalThis[k] = ex[k];
    if (typeof ex === "function" && ex.name && (!(ex.name in globalThis) || own.has(ex.name))) globalThis[ex.name] = ex;
  } catch (e) { emit({ load: msg(e) }); process.exit(0); }
  for (let i = 0; i < cfg.exprs.length; i++) {
    try {
      const x = cfg.exprs[i];
      const code = typeof x === "string" ? x : x.x;
      if (typeof x === "object") for (const n of x.own || []) if (vm.runInThisContext(n) === builtin[n]) throw new Error("the solution does not define " + n + " (the test calls the solution's own " + n + ")");
      if (typeof x === "object" && x.anyOwn && !x.anyOwn.some((n) => { const v = valueOf(n); return v !== undefined && v !== before.get(n); })) throw new Error("the call uses nothing the solution defines (names: " + x.anyOwn.join(", ").slice(0, 200) + ")");
      let v = vm.runInThisContext(code, { filename: "test" + i });
      if (typeof x === "object" && x.await) v = await v;
      else if (isThenable(v)) { emit({ i, v: { $: "opaque", type: "Promise (not awaited; a test awaits explicitly: await f())" } }); continue; }
      emit({ i, v: __rlvrEnc(v) });
    } catch (e) { emit({ i, error: msg(e) }); }
  }
  process.exit(0);
})();
`;
