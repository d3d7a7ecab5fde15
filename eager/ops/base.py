"""The op protocol, the op registry, and the two op namespaces derivatives are written in.

An op is one class holding its forward and its backward side by side::

    class Mul(Op):
        saves = (0, 1)                        # arguments the backward needs
        promotes = True                       # elementwise type promotion of the args
        def forward(a, b):                    # NumPy arrays (or Python scalars) in, array out
            return np.multiply(a, b)
        def backward(F, g, saved, node):      # one gradient per argument (None: no grad)
            a, b = saved
            return F.mul(g, b), F.mul(g, a)

An elementwise op also states its result dtype (``out_dtype``, built on the one promotion
rule :func:`eager.dtypes.result_type`) and its maths on one element (``scalar``: source
for fused kernels, written with the vocabulary of :mod:`eager.ops.scalarexpr` and the
device's table of math names), so a newcomer finds an op's forward, backward, dtype
rule and scalar expression in one class.

``forward``, ``backward``, ``out_dtype`` and ``scalar`` are plain functions (no
``self``); the metaclass makes them static.  ``backward`` is written once, in terms of
an op namespace ``F``:

* :data:`A` runs every op's ``forward`` directly on NumPy arrays.  The plain eager
  backward uses it: no Tensor objects, no graph.
* :data:`eager.dispatch.T` dispatches every op on Tensors.  ``create_graph=True`` uses it (the
  backward builds a differentiable graph), and so does a compiler tracer (each call
  is recorded as an IR node).

So each derivative has one definition, run two ways.  ``node`` gives the backward
``node.shapes`` (each argument's shape, None for a Python scalar), ``node.params``
(the keyword parameters of the forward call) and ``node.needs`` (whether each
argument wants a gradient: skip the work for those that do not).

An op whose backward recomputes part of its forward may also define ``forward_aux``: the
forward returning ``(out, aux)``.  Eager dispatch calls it when it records a grad node on
the CPU and keeps ``aux`` on the node (``node.aux``, None otherwise); the backward uses it
only when ``F`` is :data:`A` (it must give the bits the recomputation gives: the same
operations on the same values), and recomputes in every other case (a tensor backward, a
tracer, a device, an op recorded without it).

Broadcasting is undone by the engine: a gradient whose shape differs from its
argument's is summed back to it (``sum_to``), so elementwise formulas need not.
A backward must not return the same freshly made array for two arguments (the engine
takes ownership of returned arrays); returning the incoming ``g`` itself is fine.
"""

from __future__ import annotations

OUT = -1  # in ``saves``: the op's output

OPS: dict[str, type] = {}


class _OpMeta(type):
    def __new__(mcs, name, bases, ns):
        for fn in ("forward", "forward_aux", "backward", "out_dtype", "scalar"):
            if fn in ns and not isinstance(ns[fn], staticmethod):
                ns[fn] = staticmethod(ns[fn])
        cls = super().__new__(mcs, name, bases, ns)
        if bases and not ns.get("abstract", False):
            if "name" not in ns:
                cls.name = _snake(name)
            if cls.name in OPS:
                raise RuntimeError(f"op {cls.name!r} registered twice")
            OPS[cls.name] = cls
            setattr(A, cls.name, cls.forward)
        return cls

    def __repr__(cls):
        return f"<op {cls.name}>"


class Op(metaclass=_OpMeta):
    """Base class of all ops.  Subclasses are registered under ``name``."""

    abstract = True
    name = "op"
    saves: tuple = ()          # indices of arguments saved for backward; OUT for the output
    differentiable = True
    promotes = False           # cast tensor arguments to PyTorch's result dtype first
    view = False               # the output shares memory with argument 0
    elementwise = False        # output[i] depends only on inputs[i] (after broadcasting)
    random = False             # draws from the generator: never folded or CSE'd
    effect = False             # acts outside the process (a collective): kept on every replay
    data_dependent_shape = False  # output shape depends on values (nonzero): not traceable
    # elementwise, and its NumPy forward makes several passes over the data (a polynomial,
    # a where of two formulas): a fused kernel beats it at any size, so the CPU compiler
    # fuses it even alone below the device's ``singleton_min`` (compiler/passes/fusion.py)
    multipass = False
    ufunc = None               # NumPy ufunc for true in-place application, when exact
    any_device = False         # the forward takes storage of any device (to(device), const)
    forward_aux = None         # ``(out, aux)`` for the node's backward on arrays (see above)

    def forward(*args, **params):
        raise NotImplementedError

    def backward(F, g, saved, node):
        raise RuntimeError("this op is not differentiable")

    def out_dtype(*args, **params):
        """The result's NumPy dtype for these arguments (anything with ``dtype`` and
        ``ndim`` for a tensor, Python scalars as they are), decided statically — or None
        when only running the forward tells.  Elementwise ops always know: their rule is
        built on :func:`eager.dtypes.result_type`, the one promotion rule."""
        return None

    #: ``scalar(S, args, params, out)``: the op's maths on one element, for fused kernels
    #: (see :mod:`eager.ops.scalarexpr`); None: the op has no scalar form
    scalar = None


class _Namespace:
    """Attribute access to ops by name: ``F.mul(a, b)``."""

    def __init__(self, kind: str):
        self._kind = kind

    def __repr__(self):
        return f"<op namespace {self._kind}>"


A = _Namespace("arrays")   # op.forward on NumPy arrays (``T``, dispatch on tensors, is
                           # eager.dispatch's: the layer above)


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
