"""``arcbatch.jit``: a Python solver compiled once into an arcbatch program.

A function written in the DSL's solver syntax (``def solve_x(I):`` or ``def solve(S, I, C):``,
steps ``x1 = prim(...)`` calling primitives, constants and earlier variables, one ``return``)
is read from its source, checked here against what Python would do with it, and compiled by
the Rust parser into a :class:`arcbatch.JitFunction`: a call converts each argument once, runs
every step in Rust and converts the result once.

What is checked here, because only Python knows it: the statements (control flow and Python
expressions other than lambdas have no DSL form), the names (each must mean, where the function
was defined, the DSL's own primitive or constant from :mod:`arcbatch.dsl`, or an earlier variable
of the function), and that the source read matches the function's code (a file changed since it
ran, or text exec'd under another file's name, is not compiled). A function that fails any
check stays plain Python, with one :class:`arcbatch.JitWarning` naming the line and why.

Lambdas: one whose body is a DSL call of its one parameter (``lambda o: greater(size(o), 2)``)
is compiled into the closure it stands for (``compose(rbind(greater, 2), size)``); any other
becomes a Python function of its own, called back from the compiled program exactly where the
reference would call the lambda. Such a function takes the lambda's variables from the solver
(earlier steps and parameters) first and the lambda's parameters after them; the program binds
the former with ``lbind`` and receives the function as a hidden last parameter.
"""

import ast
import builtins
import copyreg
import functools
import inspect
import types
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

from . import _arcbatch
from ._arcbatch import Function, InputError, JitFunction
from ._run import _check_counts

# The DSL's names: what `arcbatch.dsl` binds them to.
_DSL: Dict[str, Any] = {**_arcbatch.primitives(), **_arcbatch.constants()}

# The attributes functools.wraps copies that a pickled JitFunction keeps (not __wrapped__: the
# original function may not pickle).
_KEPT = ("__module__", "__name__", "__qualname__", "__doc__")

_CONTROL_FLOW = {
    ast.If: "if",
    ast.For: "for",
    ast.While: "while",
    ast.Try: "try",
    ast.With: "with",
    ast.Raise: "raise",
    ast.Assert: "assert",
    ast.Break: "break",
    ast.Continue: "continue",
    ast.Pass: "pass",
}


class JitWarning(UserWarning):
    """A function given to :func:`arcbatch.jit` stays plain Python; the message says why."""


class _NotCompiled(Exception):
    """Why a function cannot be compiled, and the line of its file that says so."""

    def __init__(self, why: str, line: int):
        super().__init__(why)
        self.why, self.line = why, line


def jit(
    fn: Optional[Callable[..., Any]] = None, *, strict: bool = False, timeout_ms: Optional[int] = None
) -> Any:
    """Compile a solver written in the DSL's syntax so that it runs entirely in Rust.

    Usable as ``arcbatch.jit(fn)``, ``@arcbatch.jit`` or ``@arcbatch.jit(strict=True)``. The
    result has the function's signature, name and docstring (``__wrapped__`` is the original),
    returns exactly what the function returns, and raises the same ``arcbatch.Dsl*Error``
    classes; a call costs one conversion of each argument and one of the result. Names are
    resolved once, here: each must be a primitive or constant of :mod:`arcbatch.dsl` (star
    imported, or imported under its own name) or an earlier variable. Compiled functions
    pickle (their source travels and compiles again).

    Parameters
    ----------
    fn
        A Python function: ``def name(PARAMS):`` whose body is ``VAR = EXPR`` steps and one
        ``return EXPR``, each expression a name, an integer or a call. A docstring is allowed.
    strict
        Raise :class:`arcbatch.InputError` where the function cannot be compiled, instead of
        returning it unchanged with a :class:`arcbatch.JitWarning`.
    timeout_ms
        A time limit per call (:class:`arcbatch.DslTimeoutError` past it); none by default,
        as for :mod:`arcbatch.dsl`.

    >>> import arcbatch
    >>> from arcbatch.dsl import *
    >>> @arcbatch.jit
    ... def solve_flip(I):
    ...     x1 = vmirror(I)
    ...     O = hconcat(I, x1)
    ...     return O
    >>> solve_flip(((1, 2), (3, 4)))
    ((1, 2, 2, 1), (3, 4, 4, 3))
    >>> type(solve_flip).__name__, solve_flip.__name__
    ('JitFunction', 'solve_flip')
    """
    _check_counts(timeout_ms=timeout_ms)
    if fn is None:
        return functools.partial(jit, strict=strict, timeout_ms=timeout_ms)
    if isinstance(fn, JitFunction):
        if fn.timeout_ms == timeout_ms:
            return fn
        again = JitFunction(fn.source, fn.file, fn.first_line, timeout_ms)
        vars(again).update(vars(fn))
        return again
    try:
        return _compile(fn, timeout_ms)
    except _NotCompiled as e:
        name = getattr(fn, "__qualname__", repr(fn))
        code = getattr(fn, "__code__", None)
        file = code.co_filename if code else "<unknown>"
        where = f"arcbatch.jit: {name} ({file}, line {e.line})"
        if strict:
            raise InputError(f"{where} cannot be compiled: {e.why}") from None
        warnings.warn_explicit(f"{where} stays plain Python: {e.why}", JitWarning, file, e.line)
        return fn


def jit_module(
    namespace: Union[types.ModuleType, Dict[str, Any]], *, strict: bool = False, timeout_ms: Optional[int] = None
) -> Dict[str, Any]:
    """Compile every ``solve_*`` function of a module or a globals dict, in place.

    Each is replaced by what :func:`jit` returns for it (the function itself where it cannot be
    compiled, with one warning each); ``strict`` and ``timeout_ms`` are as for :func:`jit`.
    Returns ``{name: compiled or original function}``.

    >>> import arcbatch
    >>> from arcbatch.dsl import *
    >>> def solve_a(I):
    ...     O = vmirror(I)
    ...     return O
    >>> solvers = {"solve_a": solve_a, "helper": len}
    >>> arcbatch.jit_module(solvers)
    {'solve_a': <arcbatch.JitFunction solve_a(I)>}
    >>> solvers["solve_a"](((1, 2),))
    ((2, 1),)
    """
    table = vars(namespace) if isinstance(namespace, types.ModuleType) else namespace
    if not isinstance(table, dict):
        raise InputError(f"jit_module takes a module or a dict, got {type(namespace).__name__}")
    done = {
        name: jit(fn, strict=strict, timeout_ms=timeout_ms)
        for name, fn in list(table.items())
        if name.startswith("solve_") and isinstance(fn, (types.FunctionType, JitFunction))
    }
    table.update(done)
    return done


def _compile(fn: Callable[..., Any], timeout_ms: Optional[int]) -> JitFunction:
    """The compiled function, or :class:`_NotCompiled` saying why not."""
    if not isinstance(fn, types.FunctionType):
        raise _NotCompiled(f"{fn!r} is not a Python function", 0)
    code = fn.__code__
    if fn.__name__ == "<lambda>":
        raise _NotCompiled("a lambda (write it as def with DSL steps)", code.co_firstlineno)
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise _NotCompiled(f"its source is not available ({e})", code.co_firstlineno) from None
    fdef = _parse(lines, first, code)
    body = _check_statements(fdef)
    _check_names(fn, fdef, body)
    # The text from the def line on, without the docstring (the parser reads no strings).
    text = lines[fdef.lineno - first :]
    if body is not fdef.body:
        docstring = fdef.body[0]
        for k in range(docstring.lineno - fdef.lineno, docstring.end_lineno - fdef.lineno + 1):
            text[k] = "\n"
    callbacks = _rewrite_lambdas(fn, fdef, body, text)
    try:
        compiled = JitFunction("".join(text), code.co_filename, fdef.lineno, timeout_ms, callbacks)
    except InputError as e:
        raise _NotCompiled(str(e), fdef.lineno) from None
    return functools.update_wrapper(compiled, fn)


def _parse(lines: List[str], first: int, code: types.CodeType) -> ast.FunctionDef:
    """The def of a function's source lines (``first`` is the first one's line in its file),
    parsed where they stand in the file (lines and columns, so that it compiles to the same code)
    after checking that it does compile to the function's code: the file may have changed since
    the function was defined, or other text may have been exec'd under its name."""
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    header = []
    if indent:
        # An indented def is read inside a block; with free variables, inside a function whose
        # locals they are, as where it was defined (they compile to other instructions than
        # globals do).
        if code.co_freevars:
            header = ["def _enclosing():\n", f"{indent}{' = '.join(code.co_freevars)} = None\n"]
        else:
            header = ["if 1:\n"]
    if first <= len(header):
        raise _NotCompiled("its source starts too near the top of its file to be read alone", first)
    try:
        tree = ast.parse("\n" * (first - 1 - len(header)) + "".join(header + lines))
    except SyntaxError as e:
        raise _NotCompiled(f"its source does not parse on its own ({e.msg})", first) from None
    fdef = tree.body[0].body[-1] if header else tree.body[0]
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != code.co_name:
        raise _NotCompiled("its source is not one plain def", first)
    found = _code_named(compile(tree, code.co_filename, "exec", dont_inherit=True), code.co_name)
    if found is None or any(
        getattr(found, a) != getattr(code, a) for a in ("co_firstlineno", "co_code", "co_consts", "co_names", "co_varnames")
    ):
        raise _NotCompiled(
            "its source file does not hold the code it runs (changed since, or other text exec'd under its name)",
            first,
        )
    return fdef


def _code_named(code: types.CodeType, name: str) -> Optional[types.CodeType]:
    """The code object of the function ``name`` defined in ``code``, at any depth."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name:
                return const
            inner = _code_named(const, name)
            if inner is not None:
                return inner
    return None


def _check_statements(fdef: ast.FunctionDef) -> list:
    """The body without its docstring, after checking that it is DSL steps and a return."""
    a = fdef.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults:
        raise _NotCompiled("its parameters are not all plain (defaults, *args, keyword-only)", fdef.lineno)
    if any(p.annotation for p in a.args) or fdef.returns:
        raise _NotCompiled("annotations are not compiled", fdef.lineno)
    body = fdef.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            _check_expression(stmt.value)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            _check_expression(stmt.value)
        else:
            raise _NotCompiled(_statement_kind(stmt), stmt.lineno)
    return body


def _statement_kind(stmt: ast.stmt) -> str:
    """Why a statement is not a DSL step."""
    for kind, keyword in _CONTROL_FLOW.items():
        if isinstance(stmt, kind):
            return f"Python control flow (`{keyword}`)"
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return "a nested definition"
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return "an import inside the function"
    if isinstance(stmt, ast.Return):
        return "a bare return"
    return f"`{ast.unparse(stmt)[:60]}` is not a step `NAME = EXPRESSION`"


def _check_expression(e: ast.expr) -> None:
    """Raises unless ``e`` is a name, an integer or a call of a name with such arguments."""
    if isinstance(e, ast.Name):
        return
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
        if type(e.operand.value) is int:
            return
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and not e.keywords:
        for arg in e.args:
            if isinstance(arg, ast.Starred):
                raise _NotCompiled("a starred argument", arg.lineno)
            _check_expression(arg)
        return
    if isinstance(e, ast.Lambda):
        return  # rewritten by _rewrite_lambdas
    if isinstance(e, ast.Call) and e.keywords:
        raise _NotCompiled("a keyword argument", e.lineno)
    raise _NotCompiled(f"`{ast.unparse(e)[:60]}` has no DSL form (names, integers and calls only)", e.lineno)


def _check_names(fn: types.FunctionType, fdef: ast.FunctionDef, body: list) -> None:
    """Raises unless every name means, as Python would look it up, an earlier variable or the
    DSL's own primitive or constant of that name."""
    assigned = {stmt.targets[0].id for stmt in body if isinstance(stmt, ast.Assign)}
    bound = {p.arg for p in fdef.args.args}
    for stmt in body:
        for node in _names(stmt.value):
            if node.id in bound:
                continue
            if node.id in assigned:
                raise _NotCompiled(f"`{node.id}` is used before it is assigned", node.lineno)
            _check_global(fn, node.id, node.lineno)
        if isinstance(stmt, ast.Assign):
            bound.add(stmt.targets[0].id)


def _names(e: ast.expr) -> Iterator[ast.Name]:
    """The names of an expression that :func:`_check_expression` accepted, in order, outside
    its lambdas (:func:`_rewrite_lambdas` checks those)."""
    if isinstance(e, ast.Name):
        yield e
    elif isinstance(e, ast.Call):
        yield from _names(e.func)
        for arg in e.args:
            yield from _names(arg)


_MISSING = object()

# The hidden parameters that take a solver's called-back lambdas.
_CALLBACK = "_arcbatch_callback_"


def _rewrite_lambdas(fn: types.FunctionType, fdef: ast.FunctionDef, body: list, text: List[str]) -> List[Any]:
    """Rewrites, in ``text`` (the def's lines), each lambda of the steps: into the DSL closure it
    stands for (:func:`_as_closure`), or else into a hidden parameter holding it as a Python
    function of its own, its variables from the solver bound first with ``lbind``. Returns those
    functions, in the order of the parameters added to the def line."""
    params = [p.arg for p in fdef.args.args]
    assigned: Dict[str, int] = dict.fromkeys(params, 1)
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            assigned[stmt.targets[0].id] = assigned.get(stmt.targets[0].id, 0) + 1
    # A lambda reads a variable when it runs, the closure when it is built: the same value only
    # for a variable bound once.
    fixed = {name for name, times in assigned.items() if times == 1}
    edits = []  # (line, column, end line, end column, replacement)
    callbacks: List[Any] = []
    bound = set(params)
    for stmt in body:
        for lam in _outer_lambdas(stmt.value):
            closure = _as_closure(fn, lam, bound & fixed)
            if closure is None:
                closure = _callback(fn, lam, bound, assigned, len(callbacks), callbacks)
            edits.append((lam.lineno, lam.col_offset, lam.end_lineno, lam.end_col_offset, closure))
        if isinstance(stmt, ast.Assign):
            bound.add(stmt.targets[0].id)
    if callbacks:
        if not params:
            raise _NotCompiled("a lambda called back from a function of no parameters", fdef.lineno)
        last = fdef.args.args[-1]
        hidden = "".join(f", {_CALLBACK}{k}" for k in range(len(callbacks)))
        edits.append((last.end_lineno, last.end_col_offset, last.end_lineno, last.end_col_offset, hidden))
    # From the last edit to the first, so that each one's positions still hold; columns are
    # offsets in UTF-8 bytes. A lambda over several lines leaves empty lines in its place.
    for line, col, end_line, end_col, new in sorted(edits, reverse=True):
        first, last = line - fdef.lineno, end_line - fdef.lineno
        head, tail = text[first].encode()[:col], text[last].encode()[end_col:]
        text[first : last + 1] = [(head + new.encode() + tail).decode()] + ["\n"] * (last - first)
    return callbacks


def _outer_lambdas(e: ast.expr) -> Iterator[ast.Lambda]:
    """The lambdas of a step's expression, not those inside them."""
    if isinstance(e, ast.Lambda):
        yield e
    elif isinstance(e, ast.Call):
        for arg in e.args:
            yield from _outer_lambdas(arg)


def _plain_parameters(lam: ast.Lambda) -> Optional[List[str]]:
    """A lambda's parameters, if all are plain (no defaults, ``*args``, keyword-only)."""
    a = lam.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults:
        return None
    return [p.arg for p in a.args]


def _is_dsl(fn: types.FunctionType, name: str) -> bool:
    """Whether ``name``, looked up as the function would, is the DSL's own ``name``."""
    try:
        _check_global(fn, name, 0)
    except _NotCompiled:
        return False
    return True


def _as_closure(fn: types.FunctionType, lam: ast.Lambda, bound: set) -> Optional[str]:
    """The DSL closure a one-parameter lambda stands for, as source text, where its body is a
    call of primitives on the parameter, earlier variables, DSL constants and integers, each
    call with at most two arguments that read the parameter (``fork`` of them), and at most one
    of three; else ``None``. The closure computes what the lambda does, the same calls in the
    same order, and takes one argument as the lambda does (so ``rbind`` and ``lbind`` of it
    branch alike)."""
    params = _plain_parameters(lam)
    if params is None or len(params) != 1:
        return None
    (p,) = params

    def reads(e: ast.expr) -> bool:
        return any(isinstance(n, ast.Name) and n.id == p for n in ast.walk(e))

    def operand(e: ast.expr) -> Optional[str]:
        """A part the same on every call: a variable bound before, a DSL constant, an integer,
        a lambda that is a closure itself."""
        if isinstance(e, ast.Name):
            return e.id if e.id in bound or _is_dsl(fn, e.id) else None
        if isinstance(e, ast.Lambda):
            return _as_closure(fn, e, bound)
        try:
            _check_expression(e)
        except _NotCompiled:
            return None
        return None if isinstance(e, ast.Call) else ast.unparse(e)

    def function(e: ast.expr) -> Optional[str]:
        if isinstance(e, ast.Name) and e.id == p:
            return "identity"
        if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and not e.keywords):
            return None
        name, args = e.func.id, e.args
        if name == p or name in bound or not _is_dsl(fn, name):
            return None
        prim = _DSL[name]
        if not isinstance(prim, Function) or prim.arity != len(args) or any(isinstance(a, ast.Starred) for a in args):
            return None
        dependent = [reads(a) for a in args]
        parts = [function(a) if d else operand(a) for a, d in zip(args, dependent)]
        if None in parts:
            return None
        if sum(dependent) == 2 and len(args) == 2:
            return f"fork({name}, {parts[0]}, {parts[1]})"
        if sum(dependent) != 1:
            return None
        k = dependent.index(True)
        a = parts
        if len(args) == 1:
            bind = name
        elif len(args) == 2:
            bind = f"rbind({name}, {a[1]})" if k == 0 else f"lbind({name}, {a[0]})"
        elif len(args) == 3:
            # rbind/lbind of a function of three arguments leave one of two.
            bind = [
                f"rbind(rbind({name}, {a[2]}), {a[1]})",
                f"lbind(rbind({name}, {a[2]}), {a[0]})",
                f"lbind(lbind({name}, {a[0]}), {a[1]})",
            ][k]
        else:
            return None
        return bind if parts[k] == "identity" else f"compose({bind}, {parts[k]})"

    return function(lam.body)


def _callback(
    fn: types.FunctionType, lam: ast.Lambda, bound: set, assigned: Dict[str, int], k: int, callbacks: List[Any]
) -> str:
    """The lambda as a Python function of its own, appended to ``callbacks``: its variables from
    the solver (in order of first use) become its first parameters, which the returned text
    binds with ``lbind``; its other names are looked up where the solver was defined, when it
    runs, as the lambda's are."""
    params = _plain_parameters(lam)
    if params is None:
        raise _NotCompiled("a lambda with defaults, *args or keyword-only parameters", lam.lineno)
    # Names its nested lambdas and comprehensions bind are theirs, not the solver's.
    local = set(params)
    for node in ast.walk(lam.body):
        if isinstance(node, ast.Lambda):
            local.update(a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs)
        elif isinstance(node, ast.comprehension):
            local.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    free: List[str] = []
    for node in ast.walk(lam.body):
        if isinstance(node, ast.Name) and node.id not in local and node.id not in free:
            if node.id in fn.__code__.co_freevars:
                raise _NotCompiled(f"a lambda reading `{node.id}` from an enclosing function", node.lineno)
            if node.id in assigned and node.id not in bound:
                raise _NotCompiled(f"a lambda reading `{node.id}` before it is assigned", node.lineno)
            if node.id in bound:
                if assigned[node.id] > 1:
                    raise _NotCompiled(f"a lambda reading `{node.id}`, which is assigned more than once", node.lineno)
                free.append(node.id)
    if free and len(free) + len(params) > 4:
        raise _NotCompiled("a lambda reading more than four values (lbind binds up to three)", lam.lineno)
    lifted = ast.Lambda(
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in free + params], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=lam.body,
    )
    ast.copy_location(lifted, lam)
    ast.fix_missing_locations(lifted)
    code = compile(ast.Expression(lifted), fn.__code__.co_filename, "eval", dont_inherit=True)
    callbacks.append(eval(code, fn.__globals__))
    text = f"{_CALLBACK}{k}"
    for name in free:
        text = f"lbind({text}, {name})"
    return text


def _check_global(fn: types.FunctionType, name: str, line: int) -> None:
    """Raises unless ``name``, looked up as the function would, is the DSL's own ``name``."""
    code = fn.__code__
    if name in code.co_freevars:
        try:
            value = fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:
            value = _MISSING
    else:
        value = fn.__globals__.get(name, _MISSING)
        if value is _MISSING:
            value = getattr(builtins, name, _MISSING)
    expected = _DSL.get(name, _MISSING)
    if expected is _MISSING:
        if isinstance(value, Function):
            what = f"the DSL's {value.__name__} under another name"
        else:
            what = "a Python helper" if callable(value) else "not a DSL primitive or constant"
        raise _NotCompiled(f"`{name}` is {what}", line)
    if value is _MISSING:
        raise _NotCompiled(f"`{name}` is not defined where the function is (from arcbatch.dsl import *)", line)
    if not _identical(value, expected):
        raise _NotCompiled(f"`{name}` is {_describe(value)} there, not arcbatch.dsl's {name}", line)


def _identical(a: Any, b: Any) -> bool:
    """Equal, with the same types at every level (``True`` is not ``1``)."""
    if isinstance(b, Function):
        return isinstance(a, Function) and a == b
    if type(a) is not type(b):
        return False
    if isinstance(b, tuple):
        return len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b))
    return a == b


def _describe(value: Any) -> str:
    """A value, briefly, for messages."""
    module = getattr(value, "__module__", None)
    shown = repr(value)
    if len(shown) > 50:
        shown = shown[:47] + "..."
    return f"{shown} from module {module}" if module and callable(value) else shown


def _reduce(compiled: JitFunction):
    """Compiled functions pickle as their source, compiled again where they are unpickled (with
    their called-back lambdas, which pickle only where Python's pickle takes them)."""
    state = {k: v for k, v in vars(compiled).items() if k in _KEPT}
    args = (compiled.source, compiled.file, compiled.first_line, compiled.timeout_ms, compiled.callbacks)
    return JitFunction, args, state


copyreg.pickle(JitFunction, _reduce)
