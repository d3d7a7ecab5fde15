"""``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` and ``functional_call`` (PyTorch's
``torch.func`` names, signatures and messages), built on :func:`eager.autograd.grad`.

Each transform differentiates with respect to private copies of the chosen arguments
(``detach().requires_grad_()``, or a ``view_as`` that keeps the link when the argument
already requires grad).  The gradients are computed with ``create_graph=True`` and kept
differentiable only when they depend on something outside (an argument or a closed-over
tensor that requires grad, e.g. under an outer ``grad``), so ``grad(grad(f))`` works and
a plain ``grad(f)(x)`` returns tensors without history, as in PyTorch.  Inside ``vmap``
the same code runs on batched tensors, which gives per-sample gradients.
"""

from __future__ import annotations

import functools
import weakref

from ..autograd.engine import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..autograd.node import Node
from ..factories import eye, zeros_like
from ..tensor import Tensor
from .vmap import _flatten, _unflatten, vmap

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "hessian", "functional_call"]


def _check_argnums(argnums, n):
    def one(a):
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if 0 <= a < n:
            return a
        if -n <= a < 0:
            return a + n
        raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    if isinstance(argnums, int):
        return one(argnums)
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return tuple(one(a) for a in argnums)
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _private(x, api):
    if not isinstance(x, Tensor):
        raise RuntimeError(f"{api}: Expected tensors, got unsupported type {type(x)}")
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


#: id -> private leaf of a transform that has returned (a leaf no one differentiates
#: against any more: it never makes a later result "depend on the outside")
_DONE = weakref.WeakValueDictionary()


def _retire(private) -> None:
    for p in private:
        if p.grad_fn is None:
            _DONE[id(p)] = p


def _depends_on_outside(tensors, private) -> bool:
    """Whether the graph behind ``tensors`` reaches a tensor requiring grad other than the
    ``private`` leaves and those of transforms that have returned (a closed-over
    parameter, an input of a transform still running)."""
    own = {id(p) for p in private}
    own.update(k for k, v in list(_DONE.items()) if v is not None)
    stack = []
    for t in tensors:
        if t is None or not t.requires_grad:
            continue
        if t.grad_fn is None:
            if id(t) not in own:
                return True
        else:
            stack.append(t.grad_fn)
    seen = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for nx in n.next:
            if nx is None:
                continue
            if type(nx) is Node:
                stack.append(nx)
            elif id(nx) not in own:
                return True
    return False


def _outside_inputs(private) -> bool:
    return any(p.grad_fn is not None for p in private)   # view_as of an input needing grad


def _grads(outputs, inputs, grad_outputs, api):
    """Gradients of ``outputs`` with respect to ``inputs`` (zeros where unused), kept
    differentiable only when they depend on something outside the transform."""
    live = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if live:
        gs = _autograd_grad(tuple(o for o, _ in live), tuple(inputs),
                            None if all(g is None for _, g in live) else [g for _, g in live],
                            retain_graph=True, create_graph=True, allow_unused=True)
    else:
        gs = (None,) * len(inputs)
    gs = [zeros_like(x) if g is None else g for g, x in zip(gs, inputs)]
    if not (_outside_inputs(inputs) or _depends_on_outside(gs, inputs)):
        gs = [g.detach() for g in gs]
    return gs


def _strip(x, inputs):
    """An output returned by a transform: detached unless it depends on the outside."""
    if isinstance(x, Tensor) and x.requires_grad and not (
            _outside_inputs(inputs) or _depends_on_outside([x], inputs)):
        return x.detach()
    return x


def grad_and_value(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to argument(s) ``argnums`` and its value:
    ``(grad, value)``, or ``((grad, (value, aux)))`` with ``has_aux``.  ``func`` must
    return a scalar (0-d) Tensor; an argument may be a tuple/list/dict of Tensors (its
    gradient has the same structure)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        picked = (nums,) if isinstance(nums, int) else nums
        with enable_grad():
            args = list(args)
            specs, flat_inputs = [], []
            for i in picked:
                leaves, spec = _flatten(args[i])
                leaves = [_private(x, "grad_and_value(f)(*args)") for x in leaves]
                args[i] = _unflatten(leaves, spec)
                specs.append((spec, len(leaves)))
                flat_inputs += leaves
            output = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should "
                                       "be a tuple: (output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {output.dim()} dims. Maybe "
                                   "you wanted to use the vjp or jacrev APIs instead?")
            gs = _grads([output], flat_inputs, [None], "grad_and_value")
        out, k = [], 0
        for spec, n in specs:
            out.append(_unflatten(gs[k:k + n], spec))
            k += n
        g = out[0] if isinstance(nums, int) else tuple(out)
        value = _strip(output, flat_inputs)
        _retire(flat_inputs)
        if has_aux:
            aux_leaves, aux_spec = _flatten(aux)
            aux = _unflatten([_strip(a, flat_inputs) for a in aux_leaves], aux_spec)
            return g, (value, aux)
        return g, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of ``func`` (a function returning a scalar Tensor) with respect to
    argument(s) ``argnums``: ``grad(f)(x)``; with ``has_aux``, ``(grad, aux)``."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``): ``vjp_fn(ct)``
    returns the vector-Jacobian product with cotangents ``ct`` (the structure of the
    output) as a tuple with one entry per primal."""
    with enable_grad():
        specs, flat = [], []
        args = []
        for p in primals:
            leaves, spec = _flatten(p)
            leaves = [_private(x, "vjp(f, *primals)") for x in leaves]
            args.append(_unflatten(leaves, spec))
            specs.append((spec, len(leaves)))
            flat += leaves
        output = func(*args)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            output, aux = output
    outs, ospec = _flatten(output)
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                               f"non-empty output (got output = {output})"
                               if o is None else
                               f"vjp(f, *primals): Expected output of f to be a Tensor or "
                               f"Tensors, got {type(o)}")

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        cts, cspec = _flatten(cotangents)
        if len(cts) != len(outs):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function")
        for c, o in zip(cts, outs):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{tuple(c.shape)} and output[0] has a shape of "
                                   f"{tuple(o.shape)}.")
        with enable_grad():
            gs = _grads(outs, flat, cts, "vjp")
        res, k = [], 0
        for spec, n in specs:
            res.append(_unflatten(gs[k:k + n], spec))
            k += n
        return tuple(res)

    out = _unflatten([_strip(o, flat) for o in outs], ospec)
    _retire(flat)
    if has_aux:
        aux_leaves, aux_spec = _flatten(aux)
        return out, vjp_fn, _unflatten([_strip(a, flat) for a in aux_leaves], aux_spec)
    return out, vjp_fn


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` with respect to argument(s) ``argnums`` by reverse mode:
    ``vmap`` of ``vjp_fn`` over the rows of the identity (one batched backward, no loop
    over output elements).  Shapes ``output.shape + input.shape``; a tuple per output /
    per argnum as in PyTorch."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        picked = (nums,) if isinstance(nums, int) else nums

        def f_of_picked(*sel):
            full = list(args)
            for i, s in zip(picked, sel):
                full[i] = s
            return func(*full, **kwargs)

        res = vjp(f_of_picked, *[args[i] for i in picked], has_aux=has_aux)
        output, vjp_fn = res[0], res[1]
        outs, ospec = _flatten(output)
        numels = [o.numel() for o in outs]
        total = sum(numels)
        basis = eye(total, dtype=outs[0].dtype)
        rows, k = [], 0
        for o, n in zip(outs, numels):
            rows.append(basis[:, k:k + n].reshape((total,) + tuple(o.shape)))
            k += n
        cts = _unflatten(rows, ospec)
        jac_rows = vmap(vjp_fn, chunk_size=chunk_size)(cts)   # tuple per primal
        per_out = []
        k = 0
        for o, n in zip(outs, numels):
            per_in = []
            for j in jac_rows:
                leaves, spec = _flatten(j)
                per_in.append(_unflatten([x[k:k + n].reshape(tuple(o.shape) + tuple(x.shape[1:]))
                                          for x in leaves], spec))
            k += n
            per_out.append(per_in[0] if isinstance(nums, int) else tuple(per_in))
        jac = _unflatten(per_out, ospec)
        if has_aux:
            return jac, res[2]
        return jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of ``func`` with respect to argument(s) ``argnums``: ``jacrev`` of
    ``jacrev`` (PyTorch composes ``jacfwd(jacrev)``; eager has no forward mode, and the
    values are the same)."""
    return jacrev(jacrev(func, argnums), argnums)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the
    tensors in ``parameter_and_buffer_dicts`` (a dict name -> Tensor, or a tuple/list of
    dicts); the originals are put back afterwards, also when the call raises."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    values = dict(values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    known = dict(module.named_parameters(remove_duplicate=False)) \
        if _has_kw(module.named_parameters, "remove_duplicate") \
        else dict(module.named_parameters())
    known.update(dict(module.named_buffers()))
    if strict:
        missing = [k for k in known if k not in values]
        unexpected = [k for k in values if k not in known]
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(msgs))
    if tie_weights:   # a value given for one name of a tied tensor goes to all its names
        by_id: dict = {}
        for name, t in known.items():
            by_id.setdefault(id(t), []).append(name)
        for names in by_id.values():
            given = [n for n in names if n in values]
            if len(given) > 1 and any(values[n] is not values[given[0]] for n in given):
                raise ValueError(f"functional_call got multiple values for keys {given}, "
                                 "which are tied. Consider using tie_weights=False")
            for n in names if given else ():
                values.setdefault(n, values[given[0]])
    saved = []
    try:
        for name, value in values.items():
            owner, attr = _owner(module, name)
            saved.append((owner, attr, _swap(owner, attr, value)))
        return module(*args, **kwargs)
    finally:
        for owner, attr, old in reversed(saved):
            _swap(owner, attr, old)


def _has_kw(fn, name) -> bool:
    import inspect
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _owner(module, name):
    parts = name.split(".")
    m = module
    for p in parts[:-1]:
        m = getattr(m, p)
    return m, parts[-1]


_MISSING = object()


def _swap(owner, attr, value):
    """Put ``value`` in ``owner.attr`` (as a parameter, a buffer or a plain attribute,
    wherever the name lives) and return what was there."""
    d = owner.__dict__
    for store in (d.get("_parameters"), d.get("_buffers")):
        if store is not None and attr in store:
            old = store[attr]
            if value is _MISSING:
                del store[attr]
            else:
                store[attr] = value
            return old
    old = d.get(attr, _MISSING)
    if value is _MISSING:
        d.pop(attr, None)
    else:
        d[attr] = value
    return old
