"""Graph breaks at a line: a function whose trace met a line that cannot be compiled (a
``.numpy()`` feeding NumPy, an unknown C call, a ``backward()`` into history made outside
the call) is split at the top-level statement holding that line, as torch.compile splits a
frame at a graph break.  The statements before it become a compiled function, the
statement itself runs eagerly (each ``nn.Module`` it calls a compiled region), and the
statements after it become another compiled function, which splits again at its own
first break.

The pieces are the function's own source, cut by :mod:`ast` (line numbers and file kept,
so tracebacks and ``explain()`` name the user's lines).  The local variables live across
a cut are handed on as arguments; the pieces run with the function's globals and its very
closure cells, so what they read and write of Python state is the function's, and each
compiled piece guards and replays its reads and effects as any compiled function does.

The cut is per statement, not per bytecode: a break inside a loop, an ``if`` or a
``with`` makes that whole top-level statement the eager part.  A function without source
(a lambda, a builtin, code made in a REPL), a generator or coroutine, or one whose locals
are captured by inner functions (cells) is not split: its body runs eagerly as before,
each Module call a compiled region.
"""

from __future__ import annotations

import ast
import copy
import inspect
import os
import textwrap
import types

from eager.tensor import Tensor


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


UNBOUND = _Marker("unbound local")   # a local not assigned yet, handed across a cut
# A piece other than the last returns (RETURNED, value): True when the function returned
# there (value: its result), False when the piece ran to its end (value: the locals).

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_NOT_SPLIT = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | \
    inspect.CO_ITERABLE_COROUTINE


# -- which locals cross a cut ---------------------------------------------------------------
def _loads(node) -> set:
    """Names read anywhere in ``node`` (inner scopes included: a lambda or comprehension
    reading a local reads it too; an inner scope's own names may be counted, which only
    hands on one more argument)."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
            out.add(n.id)  # (Del reads the binding too)
        elif isinstance(n, ast.AugAssign):  # x += 1 reads x
            out |= _target_names(n.target)
    return out


def _deleted(node) -> set:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del):
            out.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:  # unbound after the handler
            out.add(n.name)
    return out


def _own_scope(stmts):
    """The nodes of ``stmts`` in the function's own scope (not inside inner functions,
    lambdas or classes)."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def _deleted_all(stmts) -> set:
    return set().union(*(_deleted(s) for s in stmts))


def _stored(stmts) -> set:
    """Every name ``stmts`` may bind (inner scopes' too: more is safe)."""
    out = set()
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                out.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).split(".")[0] for a in n.names)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                out.add(n.name)
            elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                out.add(n.name)
            elif isinstance(n, ast.MatchMapping) and n.rest:
                out.add(n.rest)
    return out


def _target_names(t) -> set:
    return {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}


def _surely_assigned(stmt) -> set:
    """Names certainly bound once ``stmt`` completes normally (fewer is safe: a name
    left out is only checked for being bound when it is handed on)."""
    if isinstance(stmt, ast.Assign):
        return set().union(*(_target_names(t) for t in stmt.targets if
                             isinstance(t, (ast.Name, ast.Tuple, ast.List))))
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name):
        return {stmt.target.id} if getattr(stmt, "value", True) is not None else set()
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
    if isinstance(stmt, ast.With):  # (its body's names not: a context manager may
        #                                 swallow an exception raised before them)
        return set().union(*(_target_names(i.optional_vars) for i in stmt.items
                             if i.optional_vars is not None))
    if isinstance(stmt, ast.If):
        return _after(stmt.body, set()) & _after(stmt.orelse, set())
    return set()


def _after(stmts, defined: set) -> set:
    """The names certainly bound after ``stmts`` run to their end, given ``defined``."""
    d = set(defined)
    for s in stmts:
        d |= _surely_assigned(s)
        d -= _deleted(s)
    return d


def live_in(stmts, defined: set = frozenset()) -> set:
    """Names that ``stmts`` may read before assigning them (more is safe, fewer is not)."""
    d = set(defined)
    out = set()
    for s in stmts:
        if isinstance(s, ast.Assign):
            out |= _loads(s.value) - d
            for t in s.targets:
                out |= _loads(t) - d  # subscripts and attributes of targets read them
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            out |= (_loads(s.iter) | _loads(s.target)) - d
            out |= live_in(s.body, d | _target_names(s.target))
            out |= live_in(s.orelse, d)
        elif isinstance(s, ast.If):
            out |= _loads(s.test) - d
            out |= live_in(s.body, d) | live_in(s.orelse, d)
        elif isinstance(s, ast.With):
            for item in s.items:
                out |= _loads(item.context_expr) - d
            inner = d | set().union(*(_target_names(i.optional_vars) for i in s.items
                                      if i.optional_vars is not None))
            out |= live_in(s.body, inner)
        else:
            out |= _loads(s) - d
        d |= _surely_assigned(s)
        d -= _deleted(s)
    return out


# -- the pieces -------------------------------------------------------------------------------
class _Returns(ast.NodeTransformer):
    """``return x`` -> ``return (True, x)`` in the function's own scope."""

    def visit_Return(self, node):
        value = node.value or ast.Constant(None)
        return ast.copy_location(ast.Return(ast.Tuple([ast.Constant(True),
                                                       value], ast.Load())), node)

    def _skip(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _skip


class _ZeroArgSuper(ast.NodeTransformer):
    """``super()`` -> ``super(__class__, first)``: a piece is not defined in the class
    body, so the compiler would not give it the implicit ``__class__`` cell."""

    def __init__(self, first: str):
        self.first = first

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args \
                and not node.keywords:
            node.args = [ast.Name("__class__", ast.Load()), ast.Name(self.first, ast.Load())]
        return node

    def _skip(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _skip


def _stmt(src: str, at) -> list:
    body = ast.parse(src).body
    for n in body:
        for m in ast.walk(n):
            if hasattr(m, "lineno"):
                m.lineno = m.end_lineno = at.lineno
                m.col_offset = m.end_col_offset = 0
    return body


class Piece:
    """One piece of a split function: its statements' lines, whether it runs compiled,
    and the plain function made of them."""

    def __init__(self, first: int, last: int, compiled: bool):
        self.first, self.last, self.compiled = first, last, compiled
        self.fn = None
        self.params: list[str] = []

    @property
    def ident(self) -> tuple:
        """What makes two pieces the same code (see :class:`Split`: kept across cuts)."""
        return (self.first, self.last, self.compiled, tuple(self.params), tuple(self.outs))

    @property
    def lines(self) -> str:
        return f"line {self.first}" if self.first == self.last else \
            f"lines {self.first}-{self.last}"


def source_def(fn):
    """(the function's ``def`` node, with file line numbers) or None."""
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None or \
            code.co_flags & _NOT_SPLIT or code.co_name == "<lambda>" or code.co_cellvars:
        return None
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or \
            tree.body[0].name != code.co_name:
        return None
    ast.increment_lineno(tree, code.co_firstlineno - 1)
    node = tree.body[0]
    if any(isinstance(n, ast.Name) and n.id in _SCOPE_READERS for n in ast.walk(node)):
        return None  # locals()/vars()/dir()/eval()/exec() would see one piece's locals
    if not _same_code(fn, node):
        return None
    positional = node.args.posonlyargs + node.args.args
    if positional:  # before the liveness: the rewritten super() reads the first argument
        rewrite = _ZeroArgSuper(positional[0].arg)
        node.body = [rewrite.visit(st) for st in node.body]
    return node


_SCOPE_READERS = ("locals", "vars", "dir", "eval", "exec")


def _same_code(fn, node) -> bool:
    """Whether ``node`` is the source ``fn`` was compiled from (a file edited since the
    import has other source): compiled again, it has the same locals, names, constants
    and lines."""
    code = fn.__code__
    fdef = copy.deepcopy(node)
    if fdef.decorator_list:  # (a decorated function's code starts at its decorator)
        fdef.lineno = fdef.decorator_list[0].lineno
    fdef.decorator_list = []
    try:
        codes = _inner_codes([fdef], code.co_freevars, node, code.co_filename)
    except SyntaxError:
        return False
    again = next((c for c in codes if c.co_name == code.co_name), None)
    return again is not None and again.co_varnames == code.co_varnames and \
        set(again.co_names) == set(code.co_names) and \
        {ln for *_, ln in again.co_lines()} == {ln for *_, ln in code.co_lines()} and \
        [c for c in again.co_consts if not isinstance(c, types.CodeType)] == \
        [c for c in code.co_consts if not isinstance(c, types.CodeType)]


def split_at(fn, lines, node=None):
    """The pieces of ``fn`` cut around each top-level statement holding one of ``lines``:
    a list of :class:`Piece` (compiled and eager in turn; runs of eager statements one
    piece), or None when ``fn`` cannot be split there.  ``node``: ``fn``'s ``def`` as
    :func:`source_def` gave it."""
    node = node or source_def(fn)
    if node is None:
        return None
    body = node.body
    eager_at = set()
    for line in lines:
        k = next((i for i, s in enumerate(body) if s.lineno <= line <= s.end_lineno), None)
        if k is None:
            return None
        eager_at.add(k)
    if any(isinstance(s, ast.Nonlocal) for s in ast.walk(ast.Module(body, []))):
        return None  # the piece would need the enclosing scope's cell by name
    code = fn.__code__
    local = set(code.co_varnames)
    groups = []
    for i, st in enumerate(body):
        compiled = i not in eager_at
        if groups and groups[-1][1] == compiled:
            groups[-1][0].append(st)
        else:
            groups.append(([st], compiled))
    args = node.args
    positional = args.posonlyargs + args.args
    first_arg = positional[0].arg if positional else None
    defined = {a.arg for a in positional + args.kwonlyargs} | \
        {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    sig = [a.arg for a in positional + args.kwonlyargs] + \
        [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    pieces = []
    for i, (stmts, compiled) in enumerate(groups):
        rest = [s for g, _ in groups[i + 1:] for s in g]
        piece = Piece(stmts[0].lineno, stmts[-1].end_lineno, compiled)
        if i:  # what it reads (or deletes): other locals pass it by, kept by Split
            names = sorted((live_in(stmts) | _deleted_all(stmts)) & local)
            if first_arg in names:  # (a method's self first: see CompiledFunction)
                names.remove(first_arg)
                names.insert(0, first_arg)
            piece.params = names
        else:
            piece.params = sig
        piece.outs = sorted(live_in(rest) & local & (_stored(stmts) | set(piece.params)))
        after = _after(stmts, defined)
        piece.tree = _piece_def(node, stmts, i, piece.params, piece.outs, defined, after,
                                not rest)
        pieces.append(piece)
        defined = after
    _build(fn, node, pieces)
    return pieces


def _piece_def(node, stmts, i, params, outs, defined, after, last) -> ast.FunctionDef:
    body = [copy.deepcopy(s) for s in stmts]
    at = body[0]
    pro = []
    for g in _own_scope(node.body):
        if isinstance(g, ast.Global):
            pro.append(copy.deepcopy(g))
    if i:
        for p in params:
            if p not in defined:
                pro += _stmt(f"if {p} is __dg_unbound:\n    del {p}", at)
    if not last:
        body = [_Returns().visit(s) for s in body]
        epi = []
        for j, o in enumerate(outs):
            if o not in after:
                epi += _stmt(f"try:\n    __dg_o{j} = {o}\nexcept NameError:\n"
                             f"    __dg_o{j} = __dg_unbound", body[-1])
        names = ", ".join(o if o in after else f"__dg_o{j}" for j, o in enumerate(outs))
        epi += _stmt(f"return False, ({names}{',' if outs else ''})", body[-1])
        body = body + epi
    if i == 0:
        a = copy.deepcopy(node.args)
        for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
            if x is not None:
                x.annotation = None
        a.defaults = [ast.Constant(None) for _ in a.defaults]
        a.kw_defaults = [None if d is None else ast.Constant(None) for d in a.kw_defaults]
    else:
        a = ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, [])
    fdef = ast.FunctionDef(f"{node.name}", a, pro + body, [], None)
    if hasattr(ast.FunctionDef, "type_params"):
        fdef.type_params = []
    return ast.copy_location(fdef, at)


def _inner_codes(defs, names, at, filename) -> list:
    """The code objects of the ``def``s compiled inside a maker function whose parameters
    are ``names`` (so the ``def``s see them as free variables, as in their own scope)."""
    maker = ast.FunctionDef("__dg_maker", ast.arguments(
        [], [ast.arg(n) for n in names], None, [], [], None, []),
        defs + [ast.Return(ast.Constant(None))], [], None)
    if hasattr(ast.FunctionDef, "type_params"):
        maker.type_params = []
    ast.copy_location(maker, at)
    mod = compile(ast.fix_missing_locations(ast.Module([maker], [])), filename, "exec",
                  dont_inherit=True)
    made = next(c for c in mod.co_consts if isinstance(c, types.CodeType))
    return [c for c in made.co_consts if isinstance(c, types.CodeType)]


def _build(fn, node, pieces) -> None:
    """Compile the pieces inside a maker whose parameters are ``fn``'s free variables and
    the markers, then make each piece a function over ``fn``'s own cells."""
    code = fn.__code__
    free = list(code.co_freevars)
    markers = {"__dg_unbound": UNBOUND}
    inner = [p.tree for p in pieces]
    codes = _inner_codes(inner, free + list(markers), node, code.co_filename)
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    for name, value in markers.items():
        cells[name] = types.CellType(value)
    for k, (p, c) in enumerate(zip(pieces, codes)):
        f = types.FunctionType(c, fn.__globals__, fn.__name__,
                               None, tuple(cells[n] for n in c.co_freevars))
        if k == 0:
            f.__defaults__ = fn.__defaults__
            f.__kwdefaults__ = fn.__kwdefaults__
        f.__qualname__ = f"{fn.__qualname__}[{p.lines}]"
        f.__name__ = f"{fn.__name__}[{p.lines}]"
        f.__module__ = fn.__module__
        p.fn = f
        del p.tree


def _split_bound(fn, lines, node):
    """:func:`split_at` of a function or of a bound method (its first piece bound to the
    same instance)."""
    func = getattr(fn, "__func__", fn)
    pieces = split_at(func, lines, node)
    if pieces is not None and func is not fn:
        pieces[0].fn = types.MethodType(pieces[0].fn, fn.__self__)
    return pieces


def line_in(fn, where: str):
    """The line of ``where`` (``file:line in name``, as guards and breaks name places)
    when it is in ``fn``'s own body, else None."""
    head, _, name = where.partition(" in ")
    file, _, line = head.rpartition(":")
    code = getattr(fn, "__code__", None)
    if code is None or not line.isdigit() or name != code.co_name or \
            os.path.basename(code.co_filename) != file:
        return None
    return int(line)


def _is_data(v) -> bool:
    """Whether a value is keyed by its contents or identity in a way that changes every
    call: a NumPy array or scalar, or an object that is not a tensor, a number, a string or
    a container of those."""
    todo = [v]
    while todo:
        x = todo.pop()
        t = type(x)
        if t in (list, tuple):
            todo.extend(x)
        elif t is dict:
            todo.extend(x.values())
        elif isinstance(x, Tensor) or x is None or t in (int, float, bool, str, complex):
            continue
        else:
            return True
    return False


class Split:
    """A function split at its graph breaks: its pieces run in turn, the compiled ones as
    compiled functions of their own (made by ``owner._piece``), the eager ones with each
    Module call a compiled region (``owner``'s regions).  A compiled piece that meets a
    break of its own cuts the function again there (:meth:`cut`)."""

    def __init__(self, owner, node, lines: set, pieces: list, reasons: list, old=None):
        self.owner, self.node, self.lines, self.reasons = owner, node, set(lines), reasons
        first = owner._argnames[0] if owner._argnames else None
        kept = {} if old is None else {p.ident: p for p in old.pieces}
        steps = []
        for k, p in enumerate(pieces):
            if p.ident in kept:  # the same statements, cut the same way: keep its traces
                p = pieces[k] = kept[p.ident]
            elif p.compiled:
                instance = owner._instance and (k == 0 or p.params[:1] == [first])
                p.compiled_fn = owner._piece(p.fn, instance)
            else:
                p.compiled_fn = None
            if p.compiled_fn is not None:
                p.compiled_fn._piece_of = self
            steps.append(p.compiled_fn if p.compiled else self._eager(p.fn))
        self.pieces = pieces
        self.steps = steps

    @classmethod
    def make(cls, owner, line: int, reasons: list):
        node = source_def(getattr(owner.fn, "__func__", owner.fn))
        if node is None:
            return None
        pieces = _split_bound(owner.fn, {line}, node)
        return None if pieces is None else cls(owner, node, {line}, pieces, reasons)

    def cut(self, line: int, reasons: list) -> bool:
        """Cut the function at one more line (a compiled piece met a break there): the
        owner's split is replaced.  False when it cannot be cut there (or is already)."""
        if line in self.lines:
            return False
        pieces = _split_bound(self.owner.fn, self.lines | {line}, self.node)
        if pieces is None:
            return False
        self.owner._split = Split(self.owner, self.node, self.lines | {line}, pieces,
                                  self.reasons + [r for r in reasons if r not in self.reasons],
                                  self)
        return True

    def cut_at_use(self, cf, old_key, new_key, args) -> bool:
        """A compiled piece ``cf`` missed its cache because an argument holding NumPy
        data or an object compared by identity changed (an environment made per call, a
        list of arrays): such values would make a new trace per call.  Cut the function
        at the piece's first statement that reads that argument, so that statement runs
        eagerly and the compiled pieces receive what it computes (tensors, as a rule).
        True when it cut."""
        piece = next((p for p in self.pieces if p.compiled_fn is cf), None)
        if piece is None or not (old_key and new_key):
            return False
        old, new = old_key[0][1], new_key[0][1]
        if len(old) != len(new):
            return False
        names = [piece.params[i] for i, (a, b) in enumerate(zip(old, new))
                 if a != b and i < len(args) and i < len(piece.params) and _is_data(args[i])]
        if not names:
            return False
        body = [s for s in self.node.body if piece.first <= s.lineno <= piece.last]
        first = next((s for s in body if _loads(s) & set(names)), None)
        if first is None:
            return False
        return self.cut(first.lineno, [f"{names[0]} holds NumPy data or an object made per "
                                       f"call (line {first.lineno} runs eagerly)"])

    def _eager(self, fn):
        owner = self.owner

        def run(*args, **kwargs):
            return owner._regions_run(fn, args, kwargs)
        return run

    def __call__(self, args, kwargs):
        """Run the pieces in turn.  The locals live across cuts are kept here by name; a
        piece receives those it reads and hands back those it may have bound (a local it
        did not receive and left unbound comes back ``UNBOUND``: kept as it was)."""
        steps, pieces = self.steps, self.pieces
        out = steps[0](*args, **kwargs)
        env = {}
        for k in range(1, len(steps)):
            returned, values = out
            if returned:
                return values
            done = pieces[k - 1]
            own = done.params
            for name, v in zip(done.outs, values):
                if v is not UNBOUND:
                    env[name] = v
                elif name in own:  # deleted (or never bound) by a piece that saw it
                    env.pop(name, None)
            out = steps[k](*[env.get(n, UNBOUND) for n in pieces[k].params])
        return out

    def describe(self) -> list:
        """A line per piece: its lines and how it runs."""
        return [f"{p.lines}: " + ("compiled" if p.compiled else "runs eagerly (graph break)")
                for p in self.pieces]
