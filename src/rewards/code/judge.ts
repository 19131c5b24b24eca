/**
 * The trusted Python judge for `assert` tests: a program that never loads the solution.
 *
 * plan:  stdin `{"op": "plan", "asserts": [stmt, …]}` → stdout
 *        `{"plans": [{"pieces": [expr, …], "prelude": [stmt, …], "checks": [expr, …], "shown": [src, …]} | {"error": msg}]}`.
 *        Each assert's test expression is split (with `ast`, without running anything) into
 *        pieces — the calls of the solution's functions, with their arguments — and a check
 *        expression in which each piece is replaced by `__rlvr_v[k]`. A name belongs to the
 *        solution unless it is a builtin or one of the standard modules the judge provides (math,
 *        re, collections, …) — also when the solution defines a function of that name, so that
 *        `def abs(x): return 0` cannot capture the test's arithmetic. A test that names nothing
 *        of the solution (`assert pow(2, 3) == 8`, the task being to write `pow`) instead makes its
 *        innermost builtin- or module-named calls pieces `{"x": expr, "own": [name]}` that the
 *        solution must define itself (the builtin never answers them); a test whose asserts call
 *        nothing of the solution at all is refused.
 *        Pieces are evaluated inside the sandbox, in the solution's process; everything else —
 *        the expected side, the comparison, abs(), sorted(), math.isclose() — in the judge.
 *        Accepted besides `assert`: imports of the provided modules, literal assignments
 *        (HumanEval's METADATA), and a `def check(candidate)` made of asserts with its call
 *        `check(f)` (the asserts are inlined with `candidate` renamed to `f`). Refused (the test
 *        fails, with the reason): any other statement, and comprehensions, lambdas or `:=` that
 *        involve the solution's names (write one test per call instead).
 * judge: stdin `{"op": "judge", "items": [{"prelude", "checks", "shown", "values": [typed | {"error"}]}]}`
 *        → stdout `{"verdicts": [{"ok": bool, "reason": str}]}`; values are rebuilt as plain
 *        Python data (typed wire format, harness.ts); a piece that raised or returned anything
 *        that is not plain data fails the test.
 */
export const PYTHON_JUDGE = String.raw`
import ast, builtins, copy, importlib, json, sys
# Standard modules a test may use; imported only when a check names them.
MODULES = {"math", "cmath", "re", "collections", "itertools", "functools", "string", "decimal", "fractions", "heapq", "bisect", "statistics", "operator", "json"}
BUILTINS = set(dir(builtins)) - {"__import__", "exec", "eval", "open", "compile", "input", "breakpoint", "exit", "quit"}
SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)

class Rename(ast.NodeTransformer):
    """Replace a check function's parameter (HumanEval's 'candidate') by the name it is called with."""
    def __init__(self, param, target):
        self.param, self.target = param, target
    def visit_Name(self, node):
        return ast.copy_location(ast.Name(self.target, node.ctx), node) if node.id == self.param else node

def plan_one(stmt):
    tree = ast.parse(stmt)
    prelude, tests, judge_names, checkers = [], [], set(), {}
    def simple(s):
        if isinstance(s, ast.Import) and all(a.name in MODULES for a in s.names):
            prelude.append(ast.unparse(s))
            judge_names.update(a.asname or a.name for a in s.names)
            return True
        if isinstance(s, ast.ImportFrom) and s.module in MODULES and s.level == 0 and all(a.name != "*" for a in s.names):
            prelude.append(ast.unparse(s))
            judge_names.update(a.asname or a.name for a in s.names)
            return True
        if isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
            ast.literal_eval(s.value)  # data only (e.g. HumanEval's METADATA)
            prelude.append(ast.unparse(s))
            judge_names.update(t.id for t in s.targets)
            return True
        return isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    for s in tree.body:
        if isinstance(s, ast.Assert):
            tests.append(s.test)
        elif isinstance(s, ast.FunctionDef) and len(s.args.args) == 1 and not (s.args.vararg or s.args.kwarg or s.args.kwonlyargs or s.decorator_list):
            body = []
            for b in s.body:
                if isinstance(b, ast.Assert):
                    body.append(b.test)
                elif not simple(b):
                    raise ValueError("a check function may hold only assert statements, got %s in %s()" % (type(b).__name__, s.name))
            checkers[s.name] = (s.args.args[0].arg, body)
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) and s.value.func.id in checkers \
                and len(s.value.args) == 1 and isinstance(s.value.args[0], ast.Name) and not s.value.keywords:
            param, body = checkers[s.value.func.id]
            tests.extend(Rename(param, s.value.args[0].id).visit(copy.deepcopy(t)) for t in body)
        elif not simple(s):
            raise ValueError("only 'assert <expression>' statements, a check(candidate) function of asserts and its call, and imports of %s are supported, got %s" % (", ".join(sorted(MODULES)), type(s).__name__))
    if not tests:
        raise ValueError("no assert statement")
    local = set()
    for t in tests:
        for n in ast.walk(t):
            if isinstance(n, ast.comprehension):
                local.update(x.id for x in ast.walk(n.target) if isinstance(x, ast.Name))
            elif isinstance(n, ast.Lambda):
                local.update(a.arg for a in ast.walk(n.args) if isinstance(a, ast.arg))
    def is_sol(name):
        # Builtins and the provided modules always mean the judge's own, even when the solution
        # defines a function of that name (else 'def abs' would capture the test's arithmetic).
        if name in judge_names or name in local or name in BUILTINS or name in MODULES:
            return False
        return True
    def dep(node):
        return any(isinstance(n, ast.Name) and is_sol(n.id) for n in ast.walk(node))
    pieces = []
    class Split(ast.NodeTransformer):
        def piece(self, node):
            pieces.append(ast.unparse(node))
            return ast.copy_location(ast.Subscript(value=ast.Name("__rlvr_v", ast.Load()), slice=ast.Constant(len(pieces) - 1), ctx=ast.Load()), node)
        def visit(self, node):
            if not isinstance(node, ast.expr) or not dep(node):
                return node
            if isinstance(node, ast.Name):
                return self.piece(node)
            if isinstance(node, ast.Call) and dep(node.func):
                return self.piece(node)
            if isinstance(node, ast.Attribute):
                root = node
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and is_sol(root.id):
                    return self.piece(node)
            if isinstance(node, SCOPES):
                raise ValueError("a comprehension, lambda or ':=' over the solution's names is not supported: %s" % ast.unparse(node)[:120])
            return self.generic_visit(node)
    OWNABLE = (BUILTINS | MODULES) - judge_names - local
    def ownable_call(n):
        return isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in OWNABLE
    class Own(ast.NodeTransformer):
        """A test naming nothing of the solution tests a builtin-named function of it (def pow):
        its innermost builtin-named calls become pieces the solution itself must define."""
        def visit(self, node):
            if ownable_call(node) and not any(ownable_call(n) for a in list(node.args) + [k.value for k in node.keywords] for n in ast.walk(a)):
                pieces.append({"x": ast.unparse(node), "own": [node.func.id]})
                return ast.copy_location(ast.Subscript(value=ast.Name("__rlvr_v", ast.Load()), slice=ast.Constant(len(pieces) - 1), ctx=ast.Load()), node)
            return self.generic_visit(node)
    shown = [ast.unparse(t) for t in tests]
    split = [Split().visit(t) for t in tests]
    if not pieces:
        split = [Own().visit(t) for t in split]
    checks = [ast.unparse(t) for t in split]
    if not pieces:
        raise ValueError("the test calls nothing of the solution: %s" % shown[0][:120])
    return {"pieces": pieces, "prelude": prelude, "checks": checks, "shown": shown}

class Bad(Exception):
    pass

def decode(x):
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list):
        return [decode(e) for e in x]
    if isinstance(x, dict):
        tag, v = x.get("$"), x.get("v")
        if tag == "int":
            return int(v)
        if tag == "float":
            return float(v)
        if tag == "tuple":
            return tuple(decode(e) for e in v)
        if tag == "dict":
            return {decode(k): decode(e) for k, e in v}
        if tag == "set":
            return set(decode(e) for e in v)
        if tag == "frozenset":
            return frozenset(decode(e) for e in v)
        if tag == "bytes":
            return bytes.fromhex(v)
        if tag == "bytearray":
            return bytearray.fromhex(v)
        if tag == "complex":
            return complex(decode(v[0]), decode(v[1]))
        if tag == "undefined":
            return None
        if tag == "opaque":
            raise Bad("returned a %s, which is not plain data" % str(x.get("type"))[:80])
    raise Bad("malformed value")

def judge_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name in MODULES:
        return importlib.import_module(name)
    raise ImportError("the judge provides only these modules: " + ", ".join(sorted(MODULES)))

def judge_one(item):
    env = {"__builtins__": dict({k: getattr(builtins, k) for k in BUILTINS}, __import__=judge_import)}
    for c in item["checks"]:
        for n in ast.walk(ast.parse(c, mode="eval")):
            if isinstance(n, ast.Name) and n.id in MODULES:
                env[n.id] = importlib.import_module(n.id)
    try:
        vals = []
        for i, v in enumerate(item["values"]):
            if isinstance(v, dict) and "error" in v and "$" not in v:
                return {"ok": False, "reason": str(v["error"])[:300]}
            vals.append(decode(v))
    except Bad as e:
        return {"ok": False, "reason": str(e)}
    except Exception as e:
        return {"ok": False, "reason": "malformed value: %s" % type(e).__name__}
    env["__rlvr_v"] = vals
    try:
        for p in item["prelude"]:
            exec(p, env)
        for c, shown in zip(item["checks"], item["shown"]):
            if not eval(c, env):
                return {"ok": False, "reason": "assertion failed: %s (values: %s)" % (shown[:160], str(vals)[:120])}
    except Exception as e:
        return {"ok": False, "reason": ("%s: %s" % (type(e).__name__, e))[:300]}
    return {"ok": True, "reason": "passed"}

req = json.loads(sys.stdin.read())
if req["op"] == "plan":
    plans = []
    for a in req["asserts"]:
        try:
            plans.append(plan_one(a))
        except BaseException as e:
            plans.append({"error": ("%s: %s" % (type(e).__name__, e))[:300]})
    out = {"plans": plans}
else:
    out = {"verdicts": [judge_one(it) for it in req["items"]]}
sys.stdout.write(json.dumps(out))
`;
