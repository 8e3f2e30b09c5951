"""Which cells of a submission the grader need not run: the instructor's demonstrations whose results nothing
graded reads.

Stock nbgrader runs every cell. Much of a chapter's time in grading goes to its demonstrations (plots, timings,
printed tables), whose results no answer, test cell or probe reads. :func:`skippable` finds them by reading the
code of the notebook the student handed in, conservatively:

* Only a notebook whose every code cell but the answers is the instructor's (the source notebook's cell ids and
  code, unchanged, in order) has anything skipped. A student who added, edited or moved a cell gets every cell
  run: their cells may reach a demonstration's effects in ways no reading follows (``torch.ops`` of an op they
  registered, a compile cache a skipped reset would have cleared).
* Always run: the answers (solution cells), the test cells, the set-up cell, any cell that cannot be read.
* A demonstration runs when it binds a name that a running cell or a probe reads (the closure is taken until
  nothing changes); when it may change an object a running cell or probe reads: it stores into it (``x.a =``,
  ``x[i] =``, ``x +=``), calls it or one of its methods (``net(x)``, ``x.train()``), hands it, or a part of it,
  to a call (``fit(x)``, ``freeze([x])``), or does any of these through an alias (``w = x.weight; w.zero_()``);
  when it reads anything an answer binds (it calls the student's function: what that does is unknown); when it
  stores into a module (``os.environ[...] =``, ``cfg = torch._dynamo.config; cfg.x =``); and when it calls
  something that changes the process's state: torch's settings and op registries, warnings filters, the
  environment, the working folder, processes, files written (:data:`GLOBAL_STATE`, :data:`STATE_VERBS`,
  :data:`WRITING_METHODS`), unless inside a ``with`` that puts it back (:data:`RESTORING`). The chapter's settings
  are the exception to "hands it to a call": the constants (UPPER_CASE) that only the set-up cell binds and no
  cell changes (``CFG``, ``DEVICE``).
* A name a cell reads counts only where its value may come from an earlier cell (read before the cell binds it,
  or by a function, which may run later); ``del x`` reads x.
* Any cell that reaches names by string (``globals()``, ``exec``, ``get_ipython``, ``__main__``, ``import *``, a
  magic other than ``%matplotlib``) makes every cell run. The probes are the course's own code: what they reach
  by string (Chapter 2 records the ``course.graphs`` functions under every name the notebook bound to one) is
  what the answers read by name.
* Seeding a random number generator is not counted (:data:`RNG`): every probe and hidden test seeds its own
  inputs, and the reference's run skips the same demonstrations, so an answer meets the same stream in both runs.

A skipped cell says so where its outputs would be, and the report lists it. Two independent attacks found holes
in earlier versions of these rules, each now a case in ``tests/test_needed.py``. The end-to-end tests grade
every chapter's reference, mutants, alternatives and attacks this way, and check that the reference's visible
tests all pass in its kernel. ``c.GradingLimits.run_every_cell = True`` turns skipping off.
"""
from __future__ import annotations

import ast
import symtable
from dataclasses import dataclass, field

from nbgrader.utils import is_grade, is_locked, is_solution

#: Names through which code reaches other names by string: a cell using one is read as "may use anything".
DYNAMIC = frozenset({"globals", "locals", "vars", "eval", "exec", "get_ipython", "__import__", "__builtins__",
                     "__main__", "compile", "runpy"})
#: Built-in functions that change nothing they are handed (they read it, or print it).
PURE_BUILTINS = frozenset({"print", "len", "repr", "str", "format", "type", "isinstance", "issubclass", "id", "hash",
                           "callable", "bool", "int", "float", "round", "abs", "hasattr", "getattr", "dir"})
#: Attributes through which code reaches a module's (or the shell's) namespace.
DYNAMIC_ATTRIBUTES = frozenset({"__main__", "__globals__", "f_globals", "f_locals", "user_ns", "user_global_ns",
                                "__builtins__"})


@dataclass
class Names:
    """What one cell's code binds and reads, as far as reading the code can tell."""

    binds: set[str] = field(default_factory=set)      # every name the cell may (re)bind, anywhere in it
    variables: set[str] = field(default_factory=set)  # ... of those, the ones bound by assignment (not def/import)
    reads: set[str] = field(default_factory=set)      # every name it reads
    stores: set[str] = field(default_factory=set)     # names whose object it stores into (x.a =, x[i] =, x +=)
    calls: set[str] = field(default_factory=set)      # names whose method it calls (x.train())
    passes: set[str] = field(default_factory=set)     # names whose object, or a part of it, it hands to a call
    dynamic: bool = False                             # reaches names by string: may bind or read anything
    global_state: bool = False                        # calls something that changes the process's state
    imports: set[str] = field(default_factory=set)    # the names it binds by import (modules, mostly)
    direct_stores: set[str] = field(default_factory=set)  # stores named in the code itself (not through an alias)


def _root(node: ast.AST) -> str | None:
    """The name an expression like ``a.b[c].d`` hangs from (``a``), if it hangs from one."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


#: Nested scopes that run at once, within their statement: comprehensions and class bodies.
_IMMEDIATE = frozenset({"listcomp", "setcomp", "dictcomp", "genexpr"})


def _inner(table: symtable.SymbolTable, deferred: bool = False) -> tuple[set[str], set[str], set[str]]:
    """The module names that the nested scopes of ``table`` read and bind (``global x; x = ...``): ``(read at once,
    read later, bound)``. A comprehension or a class body runs within its statement; a function (or lambda) runs
    when it is called, maybe after another cell has rebound what it reads."""
    now: set[str] = set()
    later: set[str] = set()
    binds: set[str] = set()
    for child in table.get_children():
        child_deferred = deferred or (child.get_type() == "function" and child.get_name() not in _IMMEDIATE)
        for sym in child.get_symbols():
            if sym.is_global() or sym.is_declared_global():
                if sym.is_referenced():
                    (later if child_deferred else now).add(sym.get_name())
                if sym.is_assigned() and sym.is_declared_global():
                    binds.add(sym.get_name())
        n, l, b = _inner(child, child_deferred)
        now |= n
        later |= l
        binds |= b
    return now, later, binds


#: Line magics that change nothing a graded cell reads (the figure backend).
HARMLESS_MAGICS = frozenset({"matplotlib"})


def _harmless_magic(node: ast.AST) -> bool:
    """``get_ipython().run_line_magic('matplotlib', ...)``, what IPython makes of ``%matplotlib inline``."""
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "run_line_magic"
            and isinstance(node.value.func.value, ast.Call) and isinstance(node.value.func.value.func, ast.Name)
            and node.value.func.value.func.id == "get_ipython" and node.value.args
            and isinstance(node.value.args[0], ast.Constant) and node.value.args[0].value in HARMLESS_MAGICS)


def _simple(stmt: ast.AST, out: "Names | None" = None) -> tuple[set[str], set[str], set[str], set[str]]:
    """One simple statement (or expression): ``(read at once, read later, bound, assigned)``, by its symbol table."""
    table = symtable.symtable(ast.unparse(stmt), "<cell>", "exec")
    if out is not None:
        out.imports |= {sym.get_name() for sym in table.get_symbols() if sym.is_imported()}
    top = {sym.get_name(): sym for sym in table.get_symbols()}
    now, later, inner_binds = _inner(table)
    now |= {name for name, sym in top.items() if sym.is_referenced()}
    binds = {name for name, sym in top.items() if sym.is_assigned() or sym.is_imported()} | inner_binds
    assigned = {name for name, sym in top.items()
                if sym.is_assigned() and not sym.is_imported() and not sym.is_namespace()} | inner_binds
    return now, later, binds, assigned


def _targets(node: ast.AST | None) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node is not None else set()


def _block(stmts: list[ast.stmt], bound: set[str], out: "Names") -> set[str]:
    """Walk ``stmts`` in order: add to ``out`` what they read from earlier cells and what they bind; return the
    names ``bound`` after them (those surely bound by then, this cell's or earlier statements')."""
    bound = set(bound)
    for stmt in stmts:
        if isinstance(stmt, (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try,
                             getattr(ast, "TryStar", ast.Try))):
            heads: list[ast.AST] = []
            inner = set(bound)
            if isinstance(stmt, (ast.If, ast.While)):
                heads.append(stmt.test)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                heads.append(stmt.iter)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                heads.extend(item.context_expr for item in stmt.items)
            for head in heads:
                now, later, binds, assigned = _simple(ast.Expr(head))
                out.reads |= (now - inner) | later
                out.binds |= binds
                out.variables |= assigned
                inner |= binds  # a walrus in the test
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                inner |= _targets(stmt.target)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    inner |= _targets(item.optional_vars)
            for node in ([stmt.target] if isinstance(stmt, (ast.For, ast.AsyncFor)) else
                         [i.optional_vars for i in stmt.items if i.optional_vars is not None]
                         if isinstance(stmt, (ast.With, ast.AsyncWith)) else []):
                now, later, binds, assigned = _simple(ast.Assign([node], ast.Constant(None), lineno=0))
                out.reads |= (now - inner) | later
                out.binds |= binds
                out.variables |= assigned
            after = _block(stmt.body, inner, out)
            others = [stmt.orelse] if isinstance(stmt, (ast.If, ast.While, ast.For, ast.AsyncFor)) else []
            if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                for handler in stmt.handlers:
                    if handler.type is not None:
                        now, later, binds, assigned = _simple(ast.Expr(handler.type))
                        out.reads |= (now - bound) | later
                    if handler.name:
                        out.binds.add(handler.name)
                        out.variables.add(handler.name)
                    _block(handler.body, bound | ({handler.name} if handler.name else set()), out)
                _block(stmt.orelse, after, out)
                _block(stmt.finalbody, bound, out)
            for other in others:
                _block(other, inner, out)
            if isinstance(stmt, (ast.With, ast.AsyncWith)):
                bound = after  # a with block's body runs (or the cell stops)
            elif isinstance(stmt, ast.If) and stmt.orelse:
                bound = bound | (after & _block(stmt.orelse, inner, Names()))
            # a loop may not run, a try may stop early, an if without else may not run: nothing surely bound
        else:
            now, later, binds, assigned = _simple(stmt, out)
            if isinstance(stmt, ast.Delete):  # ``del big`` needs big bound (by an earlier cell, unless this one)
                now |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
            out.reads |= (now - bound) | later
            out.binds |= binds
            out.variables |= assigned
            bound |= binds
    return bound


def _read_only_lookups(tree: ast.AST, out: "Names") -> set[int]:
    """The nodes of two read-only lookups by string, which read what they name: ``globals().get("NAME")`` (reads
    NAME) and ``"pkg" in sys.modules`` (reads nothing of the notebook's)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
                and node.func.value.func.id == "globals" and not node.func.value.args and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.reads.add(node.args[0].value)
            skip.add(id(node.func.value.func))
        elif (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
              and isinstance(node.comparators[0], ast.Attribute) and node.comparators[0].attr == "modules"
              and isinstance(node.comparators[0].value, ast.Name) and node.comparators[0].value.id == "sys"):
            skip.add(id(node.comparators[0]))
    return skip


def analyse(source: str) -> Names | None:
    """The names of one code cell, or None where the code cannot be read (a syntax error).

    A name the cell reads counts only where its value may come from an earlier cell: read at the top level before
    this cell binds it, or read by a function, class or comprehension of the cell (which may run later, when another
    cell has rebound it)."""
    try:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython's own syntax (magics, ``!cmd``, ``x?``): what IPython would run
            from IPython.core.inputtransformer2 import TransformerManager
            tree = ast.parse(TransformerManager().transform_cell(source))
        tree.body = [stmt for stmt in tree.body if not _harmless_magic(stmt)]
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    out = Names()
    try:
        _block(tree.body, set(), out)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    readonly = _read_only_lookups(tree, out)
    for node in ast.walk(tree):
        if id(node) in readonly:
            continue
        if isinstance(node, ast.Name) and node.id in DYNAMIC:
            out.dynamic = True
        elif isinstance(node, ast.Attribute) and (node.attr in DYNAMIC_ATTRIBUTES or
                                                  node.attr == "modules" and _root(node.value) == "sys"):
            out.dynamic = True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value == "__main__":
            out.dynamic = True
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" or a.name.split(".")[0] in DYNAMIC or a.asname in DYNAMIC for a in node.names):
                out.dynamic = True
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.For, ast.AsyncFor,
                             ast.With, ast.AsyncWith)):
            targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete)) else
                       [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor))
                       else [item.optional_vars for item in node.items if item.optional_vars is not None])
            parts = list(targets)
            while parts:  # the targets, and the elements of tuple targets; not what an index reads (x[CFG["k"]])
                part = parts.pop()
                if isinstance(part, (ast.Tuple, ast.List)):
                    parts.extend(part.elts)
                elif isinstance(part, ast.Starred):
                    parts.append(part.value)
                elif isinstance(part, (ast.Attribute, ast.Subscript)) and (root := _root(part)):
                    out.stores.add(root)
                if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                    out.stores.add(node.target.id)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                root = _root(node.func.value)
                if root:
                    out.calls.add(root)
            if isinstance(node.func, ast.Name):
                if node.func.id in PURE_BUILTINS:
                    continue
                out.calls.add(node.func.id)  # ``net(x)``, ``tick()``: calling an object may change it
            args = [*node.args, *(k.value for k in node.keywords)]
            while args:
                arg = args.pop()
                if isinstance(arg, (ast.List, ast.Tuple, ast.Set)):
                    args.extend(arg.elts)  # ``freeze_all([model])``
                elif isinstance(arg, ast.Starred):
                    args.append(arg.value)
                elif root := _root(arg):
                    out.passes.add(root)
    # An alias (``w = model.weight``, ``for layer in layers``, ``p, = params``, ``with x as y``) changes what it
    # came from: a change through it counts against the names it was taken from, to a fixed point.
    aliases, refs = _aliases(tree)
    # stores into what the code names: an earlier cell's object, a module this cell imports, or either through a
    # plain reference (``cfg = torch._dynamo.config; cfg.x = 1``, ``env = os.environ; env["X"] = "1"``)
    direct = set(out.stores)
    todo = list(direct)
    while todo:
        for origin in refs.get(todo.pop(), ()):
            if origin not in direct:
                direct.add(origin)
                todo.append(origin)
    out.direct_stores = direct & (out.reads | out.imports)
    for attr in ("stores", "calls", "passes"):
        names = getattr(out, attr)
        todo = list(names)
        while todo:
            for origin in aliases.get(todo.pop(), ()):
                if origin not in names:
                    names.add(origin)
                    todo.append(origin)
    # Only an object that came from another cell is another cell's business.
    out.stores &= out.reads
    out.calls &= out.reads
    out.passes &= out.reads
    # A context manager that puts back what it changes (``config.patch``, ``no_grad``, ``set_stance``) changes
    # nothing past its block; nor do the warnings calls inside ``with warnings.catch_warnings():``.
    scoped = frozenset(id(item.context_expr) for node in ast.walk(tree) if isinstance(node, (ast.With, ast.AsyncWith))
                       for item in node.items if _dotted(getattr(item.context_expr, "func", None)).endswith(RESTORING))
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                _dotted(getattr(item.context_expr, "func", None)) == "warnings.catch_warnings" for item in node.items):
            inside |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    decorators = {id(d) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                       ast.ClassDef)) for d in node.decorator_list}
    out.global_state = any(_changes_state(node, scoped, inside) or (id(node) in decorators and _registers(node))
                           for node in ast.walk(tree))
    return out


def _aliases(tree: ast.AST) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """``({name: the names its object may come from}, {name: the names it is a plain reference into})`` for the
    names a cell binds to (part of) another name's object: ``a = b``, ``a = b.c[0]``, ``a, b = c``, ``for a in b``,
    ``with b as a``, ``a := b``, ``a = b or c``, and comprehension targets. The second map keeps only plain
    references (``cfg = torch._dynamo.config``, not ``m = nn.Linear(2, 2)``): a store through one is a store into
    what it refers to, a module included."""
    out: dict[str, set[str]] = {}
    refs: dict[str, set[str]] = {}

    def origins(value: ast.AST) -> set[str]:
        """The outside names whose object ``value`` may be (part of): ``b.c[0]`` -> b; ``b.params()``,
        ``iter(b)``, ``zip(a, b)`` -> what was handed over; not the function called (a result is not its maker)."""
        if isinstance(value, (ast.Name, ast.Attribute, ast.Subscript, ast.Starred)):
            root = _root(value)
            return {root} if root else set()
        if isinstance(value, ast.Call):
            found = origins(value.func.value) if isinstance(value.func, ast.Attribute) else set()
            for arg in [*value.args, *(k.value for k in value.keywords)]:
                found |= origins(arg)
            return found
        if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
            return set().union(*(origins(e) for e in value.elts)) if value.elts else set()
        if isinstance(value, ast.IfExp):
            return origins(value.body) | origins(value.orelse)
        if isinstance(value, ast.BoolOp):
            return set().union(*(origins(v) for v in value.values))
        return set()

    def link(target: ast.AST | None, value: ast.AST) -> None:
        if target is None:
            return
        if (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
                and len(target.elts) == len(value.elts)):
            for t, v in zip(target.elts, value.elts):
                link(t, v)
            return
        found = origins(value)
        plain = isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)) and _root(value)
        for n in ast.walk(target):
            if isinstance(n, ast.Name) and found - {n.id}:
                out.setdefault(n.id, set()).update(found - {n.id})
                if plain and isinstance(target, ast.Name):
                    refs.setdefault(n.id, set()).update(found - {n.id})

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                link(t, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            link(node.target, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            link(node.target, node.iter)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                link(item.optional_vars, item.context_expr)
    return out, refs


#: Calls that change the process's state, which a later cell may see whatever names it reads: torch's global
#: settings and registries, the compilers' caches, warnings filters, the environment, the working folder, the import
#: path, and files written.
GLOBAL_STATE = ("torch.set_", "torch.use_deterministic_algorithms", "torch.backends.", "torch.library.",
                "torch._dynamo.", "torch.compiler.", "torch._inductor.", "torch._logging.", "torch.autograd.set_",
                "torch.autograd.graph.", "torch.nn.modules.module.register_", "torch.save", "torch.cuda.set_",
                "torch.export.register", "torch.serialization.add_safe_globals", "torch.utils.register",
                "warnings.", "os.environ", "os.putenv", "os.chdir", "os.remove", "os.unlink", "os.rename",
                "os.makedirs", "os.mkdir", "sys.path", "sys.setrecursionlimit", "shutil.", "np.save", "numpy.save",
                "json.dump", "pickle.dump", "logging.basicConfig", "logging.disable", "plt.rcParams",
                "matplotlib.rc", "torch._C._", "torch.jit.save", "torch.export.save", "torch.distributed.",
                "dist.", "mp.set_", "multiprocessing.set_", "np.set_", "numpy.set_", "torch.hub.set_",
                "subprocess.", "os.system", "torch.autograd.grad_mode.")
#: ... but not these, which read state, or put back what they change (a demonstration that compiles and then
#: resets Dynamo, skipped, leaves its caches as they were).
NEUTRAL = ("torch._dynamo.reset", "torch._dynamo.explain", "torch._dynamo.lookup_backend", "torch._dynamo.graph_break",
           "torch._dynamo.mark_dynamic", "torch._dynamo.list_backends", "torch._inductor.list_mode_options",
           "torch.library.opcheck", "torch.backends.cpu.get_cpu_capability", "torch.backends.mps.is_available",
           "torch.backends.cuda.is_built", "torch.backends.mps.is_built", "torch.backends.mkldnn.is_available",
           "torch.backends.cudnn.is_available", "torch.backends.cudnn.version", "os.environ.get",
           "os.environ.items", "os.environ.copy", "os.environ.keys", "torch.compiler.cudagraph_mark_step_begin",
           "torch.compiler.is_compiling", "torch._dynamo.is_compiling", "warnings.warn")
#: Calls whose last name says they change state somewhere, whatever module they come from (a course helper that
#: installs a warnings filter, ``set_grad_enabled`` imported bare, ``dist.init_process_group``, ``@custom_op``).
STATE_VERBS = ("set_", "register", "filter", "quiet", "install", "enable", "disable", "patch", "init_", "use_",
               "destroy_", "add_", "custom_op", "triton_op", "define", "impl", "load_library", "setLevel")
STATE_NAMES = frozenset({"Library", "system", "run", "call", "check_call", "check_output", "Popen", "savefig",
                         "__enter__", "clear", "cache_clear"})
#: Seeding the random number generators is not counted: every probe and hidden test seeds its own inputs, and the
#: reference's run skips the same demonstrations, so an answer meets the same stream in both runs.
RNG = ("torch.manual_seed", "torch.random.", "torch.set_rng_state", "torch.cuda.manual_seed", "np.random.seed",
       "numpy.random.seed", "random.seed", "set_seed", "seed_everything", "L.seed_everything")
#: Context managers that put back, at the end of their block, what they change.
RESTORING = ("patch", "catch_warnings", "set_stance", "no_grad", "enable_grad", "inference_mode", "autocast",
             "set_grad_enabled", "device", "TemporaryDirectory", "profile", "record_function", "redirect_stdout",
             "redirect_stderr", "suppress", "capture_output", "catch_warnings", "sdpa_kernel", "detect_anomaly")
#: Method names that write files or change a folder, whatever they are called on (a Path, a model).
WRITING_METHODS = frozenset({"write_text", "write_bytes", "mkdir", "unlink", "rmdir", "touch", "chmod", "symlink_to",
                             "writelines", "save_pretrained", "to_csv", "save", "savefig", "dump"})


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _changes_state(node: ast.AST, scoped: frozenset[int] = frozenset(), restored=frozenset()) -> bool:
    """Whether ``node`` is a call that may change the process's state (see :data:`GLOBAL_STATE`). ``scoped``: the
    calls that are a ``with`` statement's context and put back what they change (:data:`RESTORING`);
    ``restored``: the nodes inside ``with warnings.catch_warnings():``."""
    if not isinstance(node, ast.Call) or id(node) in scoped:
        return False
    name = _dotted(node.func)
    if name.startswith(NEUTRAL + RNG) or (id(node) in restored and name.startswith("warnings.")):
        return False
    last = name.split(".")[-1]
    if last in ("set_seed", "seed_everything", "manual_seed"):
        return False
    if name and (name.startswith(GLOBAL_STATE) or last.startswith(STATE_VERBS) or last in STATE_NAMES):
        return True
    if isinstance(node.func, ast.Attribute) and node.func.attr in WRITING_METHODS:
        return True
    # a file opened for writing (open, Path.open, ZipFile, tarfile.open ...): a mode with w, a, x or +
    modes = [a for a in node.args[1:2] if last in ("open", "ZipFile", "TarFile")] + [
        k.value for k in node.keywords if k.arg == "mode"]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax+") for m in modes)


def _registers(decorator: ast.AST) -> bool:
    """A decorator that registers what it decorates somewhere global (``@custom_op(...)``, ``@register_fake``)."""
    name = _dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
    last = name.split(".")[-1]
    return bool(name) and (name.startswith(GLOBAL_STATE) or last.startswith(STATE_VERBS) or last in STATE_NAMES)


def _probe_reads(source: str) -> set[str]:
    """The notebook names a probe reads: its module-level names and its functions' globals. A probe is the
    course's own code: what it reaches by string (Chapter 2 records the ``course.graphs`` functions under every name
    the notebook bound to one) is what the answers read by name."""
    try:
        table = symtable.symtable(source, "<probe>", "exec")
    except (SyntaxError, ValueError):
        return set()
    now, later, _ = _inner(table)
    return now | later | {sym.get_name() for sym in table.get_symbols() if sym.is_referenced()}


def _always_runs(cell) -> bool:
    return is_solution(cell) or is_grade(cell)


def skippable(nb, probe_sources=(), instructor=None) -> set[int]:
    """Indices of the code cells of ``nb`` that the grader need not run (see the module's docstring).

    ``instructor``: the chapter's source notebook. Only its own demonstrations are ever skipped: a cell whose id
    and code are the instructor's, unchanged (a cell the student added or edited always runs). Without it, nothing
    is skipped."""
    if instructor is None:
        return set()
    # (the test cells are compared by id only: the worker strips their hidden part, and nbgrader puts back the
    # instructor's version of every locked cell anyway)
    theirs = {c.get("id"): c.source.strip() for c in instructor.cells
              if c.cell_type == "code" and c.get("id") and not _always_runs(c)}
    # Only a notebook whose every code cell but the answers is the instructor's, unchanged and in order: a cell the
    # student added, edited or moved may reach the demonstrations' effects in ways no reading can follow
    # (``torch.ops`` of an op they registered, a compile cache a reset would clear), so then every cell runs.
    order = [c.get("id") for c in instructor.cells if c.cell_type == "code"]
    mine = [c for c in nb.cells if c.cell_type == "code" and not _always_runs(c)]
    if any(theirs.get(c.get("id")) != c.source.strip() for c in mine if c.source.strip()):
        return set()
    ids = [c.get("id") for c in nb.cells if c.cell_type == "code"]
    if [i for i in order if i in set(ids)] != [i for i in ids if i in set(order)]:
        return set()
    names: dict[int, Names | None] = {i: analyse(c.source) for i, c in enumerate(nb.cells)
                                      if c.cell_type == "code" and c.source.strip()}
    if not names:
        return set()
    setup = min(names)  # the chapter's set-up cell: imports, settings, seeds
    candidates = {i for i, n in names.items()
                  if i != setup and n is not None and not n.dynamic and not n.global_state
                  and not _always_runs(nb.cells[i])}
    runs = set(names) - candidates
    needed: set[str] = set()
    for i in runs:
        n = names[i]
        if n is None:
            continue
        if n.dynamic:
            return set()
        needed |= n.reads
    for source in probe_sources:
        needed |= _probe_reads(source)
    # The student's own code (the answers): what it does when called is unknown, so a demonstration that reads any
    # name it binds (calls the student's function, uses the student's object) runs.
    students = set().union(*(names[i].binds - names[i].imports for i in runs
                             if names[i] is not None and is_solution(nb.cells[i])))
    # The settings: the constants (UPPER_CASE, PEP 8) the set-up cell binds and no other cell rebinds, stores into
    # or calls a method of (CFG, DEVICE, WORK ...). Handing one to a function reads it.
    others = [n for i, n in names.items() if i != setup and n is not None]
    settings = {name for name in (names[setup].variables if names[setup] is not None else set())
                if name.isupper()} - set().union(*(n.binds | n.stores | n.calls for n in others))
    variables = set().union(*(names[i].variables for i in runs if names[i] is not None))
    # a store into a module (``os.environ[...] =``, ``torch.backends.x =``) is the process's state
    modules = set().union(*(n.imports for n in names.values() if n is not None))
    bound = set().union(*(n.binds for n in names.values() if n is not None))  # the notebook's names (no builtins)
    changed = True
    while changed:
        changed = False
        for i in sorted(candidates - runs):
            n = names[i]
            # Calls on modules and functions (``torch.randn``, ``plot(...)``) change no object a graded cell
            # holds; calls on a variable it reads may.
            # (a store through an alias of a module's result, ``m = nn.Linear(2, 2); m.bias = None``, is into a
            # new object, not into the module)
            if (n.binds & needed or (n.stores - modules) & needed or n.direct_stores & modules or n.reads & students
                    or (n.calls - modules) & needed & bound or (n.passes - settings) & needed & variables):
                runs.add(i)
                needed |= n.reads
                variables |= n.variables
                changed = True
    return set(names) - runs
