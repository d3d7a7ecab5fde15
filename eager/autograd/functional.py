"""``eager.autograd.functional``: PyTorch's higher-level autograd API.

``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp`` with PyTorch's
signatures, defaults, result structure and error messages, built on
:func:`eager.autograd.grad` (reverse mode only; ``jvp`` and ``hvp`` use the double
backward trick, as PyTorch does).  Inputs are a Tensor or a tuple of Tensors; results
follow the same structure.  Without ``create_graph`` the results are detached.
``jacobian(..., vectorize=True)`` (and ``hessian``'s) runs one batched backward through
:func:`eager.func.vmap` over the rows of the identity instead of one backward per output
element; ``strategy="forward-mode"`` is not supported.
"""

from __future__ import annotations

from ..factories import eye, zeros_like
from ..fn.shape import stack
from ..func.vmap import vmap
from ..tensor import Tensor
from .engine import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(inp, arg_name, fn_name):
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = (f"value at index {i} has type {type(el)}" if is_tuple
                     else f"given {arg_name} has type {type(el)}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    out = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            out.append(inp.view_as(inp))    # keep the link to the outer graph
        else:
            t = inp.detach()
            if need_graph:
                t.requires_grad_(True)
            out.append(t)
    return tuple(out)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(t.detach() for t in inputs)
    return tuple(_grad_postprocess(t, create_graph) for t in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} "
                               f"but got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs.")
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False,
                   retain_graph=None):
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grads = [], []
    for out, g in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grads.append(g)
    if not new_outputs:
        return (None,) * len(inputs)
    if all(g is None for g in new_grads):
        new_grads = None
    return _grad(tuple(new_outputs), inputs, new_grads, retain_graph=retain_graph,
                 create_graph=create_graph, allow_unused=True)


_ZERO_MSGS = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_MSGS[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare_v(v, ref, ref_is_tuple, create_graph, fn_name, none_msg):
    if v is None:
        if len(ref) != 1 or ref[0].nelement() != 1:
            raise RuntimeError(none_msg)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, ref, ref_is_tuple)
    return v


_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function "
                 "is a single Tensor with a single element.")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``.

    Returns ``(func_output, vjp)``; ``vjp`` has the structure of ``inputs``.  ``v`` may be
    None only when ``func`` returns a single one-element Tensor."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp",
                       "The vector v can only be None if the user-provided function returns "
                       "a single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs`` (by the double backward
    trick).  Returns ``(func_output, jvp)``; ``jvp`` has the structure of the output."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp",
                       "The vector v can only be None if the input to the user-provided "
                       "function is a single Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``.

    For a Tensor input and output: a Tensor of shape ``output.shape + input.shape``; a
    tuple per input when ``inputs`` is a tuple, a tuple per output when ``func`` returns
    one (``jac[i][j]``: output ``i`` with respect to input ``j``)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or '
                             '"reverse-mode".')
    if strategy == "forward-mode":
        raise NotImplementedError('jacobian: strategy="forward-mode" is not supported (eager '
                                  'has no forward-mode AD); use strategy="reverse-mode"')
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize:
            jac = _jacobian_vectorized(outputs, inputs, create_graph)
            jac = _grad_postprocess(jac, create_graph)
            return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))
        jac = []
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for k in range(out.nelement()):
                vj = _autograd_grad((flat[k],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for j, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent "
                                f"of input {i}. This is not allowed in strict mode when "
                                "create_graph=True.")
                        row.append(g)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {j}. This is not allowed in strict mode.")
                        row.append(zeros_like(inp))
            jac.append(tuple(
                (stack(row, dim=0) if row else zeros_like(inp).reshape((0,) + inp.shape))
                .reshape(tuple(out.shape) + tuple(inp.shape))
                for row, inp in zip(rows, inputs)))
        jac = _grad_postprocess(tuple(jac), create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_vectorized(outputs, inputs, create_graph):
    """Every row of the Jacobians in one backward: ``vmap`` over the rows of the identity
    as batched output gradients (PyTorch's ``is_grads_batched``)."""
    numels = [o.nelement() for o in outputs]
    total = sum(numels)
    flat = tuple(o.reshape(-1) for o in outputs)
    live = [k for k, o in enumerate(flat) if o.requires_grad]
    basis = eye(total, dtype=outputs[0].dtype)
    starts = [sum(numels[:k]) for k in range(len(numels))]

    def rows_for(*vs):
        gs = _grad(tuple(flat[k] for k in live), inputs, list(vs), retain_graph=True,
                   create_graph=True, allow_unused=True)
        return tuple(zeros_like(x) if g is None else g for g, x in zip(gs, inputs))

    if live:
        rows = vmap(rows_for)(*[basis[:, starts[k]:starts[k] + numels[k]] for k in live])
    else:
        rows = tuple(zeros_like(x).expand((total,) + tuple(x.shape)) for x in inputs)
    return tuple(tuple(r[st:st + n].reshape(tuple(o.shape) + tuple(inp.shape))
                       for r, inp in zip(rows, inputs))
                 for o, n, st in zip(outputs, numels, starts))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: ``input.shape + input.shape`` for a Tensor input,
    ``h[i][j]`` (inputs ``i`` and ``j``) for a tuple of inputs."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function",
                                        "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_first_grad(func, inputs, v, create_graph, strict, fn_name):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, fn_name, _V_NONE_INPUT)
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Hessian product ``v^T H`` of a scalar function.  Returns
    ``(func_output, vhp)``; ``vhp`` has the structure of ``inputs``."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_first_grad(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Hessian-vector product ``H v`` of a scalar function (double backward trick, as
    PyTorch).  Returns ``(func_output, hvp)``; ``hvp`` has the structure of ``inputs``."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_first_grad(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))
