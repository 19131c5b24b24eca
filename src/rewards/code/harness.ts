/**
 * Source text of the small programs that host a solution inside the sandbox.
 *
 * Both harnesses read their settings from the environment variable RLVR_HARNESS (removed before
 * the solution runs) and, in "function" mode, read and delete `tests.json` before loading the
 * solution, so the solution cannot read the expected values. Results are written as lines
 * `<nonce>{json}` on file descriptor 1; the nonce is random per run and never visible to the
 * solution through the environment or the file system (a determined program could still dig it
 * out of the interpreter's memory: same-process checks are a convenience, not a security
 * boundary; the OS layers in sandbox.ts are the boundary).
 */

/** Python harness: rlimits via `resource`, audit hook, then run the solution. */
export const PYTHON_HARNESS = String.raw`
import sys, os, json, io
_cfg = json.loads(os.environ.pop("RLVR_HARNESS"))
_nonce = _cfg["nonce"]
_work = os.path.realpath(_cfg["workdir"])
_out = os.dup(1)

try:
    import resource
    def _lim(kind, value):
        try:
            soft, hard = resource.getrlimit(kind)
            v = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (v, v))
        except Exception:
            pass
    _lim(resource.RLIMIT_AS, _cfg["memBytes"])
    _lim(resource.RLIMIT_FSIZE, _cfg["fileBytes"])
    _lim(resource.RLIMIT_NPROC, _cfg["nproc"])
    _lim(resource.RLIMIT_CORE, 0)
except Exception:
    pass

_tests = None
if _cfg["mode"] == "function":
    with open("tests.json", encoding="utf-8") as f:
        _tests = json.load(f)
    os.remove("tests.json")

def _inside(p):
    try:
        if isinstance(p, int):
            return True
        if isinstance(p, bytes):
            p = os.fsdecode(p)
        r = os.path.realpath(os.path.join(_work, p))
        return r == _work or r.startswith(_work + os.sep) or r == "/dev/null"
    except Exception:
        return False

_BLOCK = {
    "os.system", "os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen",
    "pty.spawn", "os.startfile", "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.sendto",
    "socket.sendmsg", "socket.gethostbyname", "socket.gethostbyaddr", "socket.__new__", "ctypes.dlopen",
    "ctypes.dlsym", "os.setuid", "os.setgid", "os.chroot", "sys.addaudithook",
}
_PATH1 = {"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.utime",
          "shutil.rmtree", "os.listxattr", "os.removexattr", "os.setxattr", "shutil.copyfile", "shutil.copytree",
          "shutil.move", "shutil.copymode", "shutil.copystat", "shutil.chown"}
_PATH2 = {"os.rename", "os.link", "os.symlink"}
_W = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

def _hook(event, args):
    if event == "open":
        path, mode, flags = args[0], args[1], args[2]
        writing = (isinstance(flags, int) and (flags & _W) != 0) or (isinstance(mode, str) and any(c in mode for c in "wax+"))
        if writing and not _inside(path):
            raise PermissionError("sandbox: write outside the work directory refused: %r" % (path,))
    elif event in _BLOCK:
        raise PermissionError("sandbox: %s refused" % event)
    elif event in _PATH1:
        if args and not _inside(args[0]):
            raise PermissionError("sandbox: %s outside the work directory refused" % event)
    elif event in _PATH2:
        for a in args[:2]:
            if not _inside(a):
                raise PermissionError("sandbox: %s outside the work directory refused" % event)

sys.addaudithook(_hook)

def _emit(obj):
    line = "\n" + _nonce + json.dumps(obj) + "\n"
    os.write(_out, line.encode("utf-8", "replace"))

def _norm(v):
    try:
        return json.loads(json.dumps(v))
    except Exception:
        return repr(v)

def _eq(a, b, tol):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if tol is None:
            return a == b
        return abs(a - b) <= tol * max(1.0, abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_eq(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_eq(a[k], b[k], tol) for k in a)
    return a == b

with open(_cfg["entry"], encoding="utf-8") as f:
    _src = f.read()

if _cfg["mode"] == "stdio":
    _g = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(compile(_src, _cfg["entry"], "exec"), _g)
    except SystemExit as e:
        code = e.code
        sys.stdout.flush()
        os._exit(code if isinstance(code, int) else (0 if code is None else 1))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
else:
    sys.stdout = open(os.devnull, "w")
    _g = {"__name__": "solution", "__builtins__": __builtins__}
    _load = None
    try:
        exec(compile(_src, _cfg["entry"], "exec"), _g)
    except BaseException as e:
        _load = (type(e).__name__ + ": " + str(e))[:300]
    for i, t in enumerate(_tests):
        if _load is not None:
            _emit({"i": i, "ok": False, "error": "solution failed to load: " + _load})
            continue
        try:
            if t.get("assert") is not None:
                exec(compile(t["assert"], "<test %d>" % i, "exec"), _g)
                _emit({"i": i, "ok": True})
            else:
                v = eval(compile(t["call"], "<test %d>" % i, "eval"), _g)
                got = _norm(v)
                ok = _eq(got, t.get("expected"), t.get("tolerance"))
                _emit({"i": i, "ok": bool(ok), "got": json.dumps(got)[:200] if not ok else None})
        except BaseException as e:
            _emit({"i": i, "ok": False, "error": (type(e).__name__ + ": " + str(e))[:300]})
    os._exit(0)
`;

/** Node harness (CommonJS): function mode only; stdio mode runs the solution file directly. */
export const NODE_HARNESS = String.raw`
const fs = require("fs");
const vm = require("vm");
const cfg = JSON.parse(process.env.RLVR_HARNESS);
delete process.env.RLVR_HARNESS;
const nonce = cfg.nonce;
const tests = JSON.parse(fs.readFileSync("tests.json", "utf8"));
fs.unlinkSync("tests.json");
const src = fs.readFileSync(cfg.entry, "utf8").replace(/^\s*export\s+(default\s+)?/gm, "");
const write = fs.writeSync.bind(fs);
const emit = (o) => write(1, "\n" + nonce + JSON.stringify(o) + "\n");
process.stdout.write = () => true;
console.log = console.info = console.debug = () => {};
globalThis.module = { exports: {} };
globalThis.exports = globalThis.module.exports;
globalThis.require = require;
globalThis.assert = require("assert");
function norm(v) { try { const s = JSON.stringify(v); return s === undefined ? null : JSON.parse(s); } catch { return String(v); } }
function eq(a, b, tol) {
  if (typeof a === "number" && typeof b === "number") return tol == null ? a === b : Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => eq(x, b[i], tol));
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a).sort(), kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && eq(a[k], b[k], tol));
  }
  return a === b;
}
(async () => {
  let load = null;
  try {
    vm.runInThisContext(src, { filename: cfg.entry });
    const ex = globalThis.module.exports;
    if (ex && typeof ex === "object") for (const k of Object.keys(ex)) if (!(k in globalThis)) globalThis[k] = ex[k];
    if (typeof ex === "function" && ex.name && !(ex.name in globalThis)) globalThis[ex.name] = ex;
  } catch (e) { load = String(e && e.stack ? String(e).slice(0, 300) : e); }
  for (let i = 0; i < tests.length; i++) {
    const t = tests[i];
    if (load !== null) { emit({ i, ok: false, error: "solution failed to load: " + load }); continue; }
    try {
      if (t.assert != null) {
        let r = vm.runInThisContext(t.assert, { filename: "test" + i });
        if (r && typeof r.then === "function") await r;
        emit({ i, ok: true });
      } else {
        let v = vm.runInThisContext(t.call, { filename: "test" + i });
        if (v && typeof v.then === "function") v = await v;
        const got = norm(v);
        const ok = eq(got, t.expected === undefined ? null : t.expected, t.tolerance);
        emit({ i, ok, got: ok ? null : String(JSON.stringify(got)).slice(0, 200) });
      }
    } catch (e) { emit({ i, ok: false, error: String(e).slice(0, 300) }); }
  }
  process.exit(0);
})();
`;
