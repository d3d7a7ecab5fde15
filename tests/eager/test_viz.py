"""eager.viz: DOT text and the terminal tree of a tensor's graph."""

import io
import re

import numpy as np
import pytest

import eager as torch
from eager import viz


def _graph():
    x = torch.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, requires_grad=True)
    w = torch.tensor(np.ones((4, 2), dtype=np.float32), requires_grad=True)
    h = torch.tanh(x @ w)
    y = (h * h + h).sum()
    return x, w, h, y


def _nodes(dot):
    """id -> label of every vertex statement."""
    return dict(re.findall(r'^\s+(\w+) \[.*label="([^"]*)"', dot, re.MULTILINE))


def _edges(dot):
    return re.findall(r"^\s+(\w+) -> (\w+)", dot, re.MULTILINE)


def test_dot_structure():
    *_, y = _graph()
    dot = viz.to_dot(y)
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    nodes = _nodes(dot)
    labels = list(nodes.values())
    ops = [lab.split("\\n")[0] for lab in labels]
    # one vertex per grad node (the shared tanh appears once), two leaves, the output
    assert ops.count("TanhBackward0") == 1
    assert sum(op.endswith("Backward0") for op in ops) == 5
    assert sum(op == "leaf" for op in ops) == 2
    assert "output" in ops
    ids = {lab.split("\\n")[0]: k for k, lab in nodes.items()}
    edges = _edges(dot)
    # inputs point at the op that consumed them; tanh feeds mul twice and add once
    assert edges.count((ids["TanhBackward0"], ids["MulBackward0"])) == 2
    assert (ids["TanhBackward0"], ids["AddBackward0"]) in edges
    assert (ids["SumBackward0"], "out") in edges
    leaves = [k for k, lab in nodes.items() if lab.startswith("leaf")]
    op_mm = next(k for k, lab in nodes.items() if "atmul" in lab or lab.startswith("Mm"))
    assert sorted((a, b) for a, b in edges if b == op_mm) == sorted((t, op_mm) for t in leaves)
    # every edge endpoint is a declared vertex
    for a, b in edges:
        assert a in nodes and b in nodes


def test_dot_shapes_dtypes_and_leaf_marking():
    _, w, _, y = _graph()
    dot = viz.to_dot(y, params={"weight": w})
    nodes = _nodes(dot)
    text = "\n".join(nodes.values())
    assert "TanhBackward0\\n(3, 2) float32" in text     # output shape of an inner node
    assert "SumBackward0\\n() float32" in text           # the root's
    assert "leaf\\n(3, 4) float32\\nrequires_grad=True" in text
    assert "weight\\n(4, 2) float32\\nrequires_grad=True" in text
    leaf_lines = [ln for ln in dot.splitlines() if "requires_grad=" in ln]
    assert len(leaf_lines) == 2 and all("ellipse" in ln for ln in leaf_lines)
    op_lines = [ln for ln in dot.splitlines() if "Backward0" in ln]
    assert op_lines and all("shape=box" in ln for ln in op_lines)


def test_dot_is_deterministic():
    texts = set()
    for _ in range(3):
        *_, y = _graph()
        texts.add(viz.to_dot(y))
    assert len(texts) == 1
    # and first arguments come before later ones
    *_, y = _graph()
    nodes = list(_nodes(viz.to_dot(y)).values())
    assert nodes[0].startswith("SumBackward0")
    assert nodes.index(next(n for n in nodes if n.startswith("MulBackward0"))) < \
        nodes.index(next(n for n in nodes if n.startswith("TanhBackward0")))


def test_leaf_tensor_alone():
    a = torch.ones(2, 3)
    dot = viz.to_dot(a)
    assert "requires_grad=False" in dot and "->" not in dot
    buf = io.StringIO()
    viz.print_graph(a, file=buf)
    assert buf.getvalue().strip() == "leaf (2, 3) float32"
    with pytest.raises(TypeError):
        viz.to_dot(np.ones(3))


def test_print_graph_tree_and_shared_subgraph():
    _, w, _, y = _graph()
    buf = io.StringIO()
    viz.print_graph(y, file=buf, params={"w": w})
    lines = buf.getvalue().splitlines()
    assert lines[0] == "SumBackward0 () float32"
    assert lines[1].startswith("└─ AddBackward0 (3, 2) float32")
    # the shared tanh is expanded once, with a tag, and referenced twice
    expanded = [ln for ln in lines if "TanhBackward0" in ln and "see" not in ln]
    refs = [ln for ln in lines if "-> see [#1]" in ln]
    assert len(expanded) == 1 and expanded[0].endswith("[#1]")
    assert len(refs) == 2
    assert sum("Matmul" in ln or "MmBackward" in ln for ln in lines) == 1
    leaf_lines = [ln for ln in lines if "leaf" in ln]
    assert len(leaf_lines) == 2
    assert all(ln.endswith("requires_grad") for ln in leaf_lines)
    assert any("leaf 'w' (4, 2) float32" in ln for ln in leaf_lines)
    # indentation grows with depth
    depth = {ln.strip(): len(ln) - len(ln.lstrip(" │├└─")) for ln in lines}
    assert depth["SumBackward0 () float32"] == 0


def test_print_graph_defaults_to_stdout(capsys):
    *_, y = _graph()
    viz.print_graph(y)
    assert capsys.readouterr().out.startswith("SumBackward0")


def test_deep_graph_no_recursion():
    x = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(3000):   # deeper than Python's default recursion limit
        y = y * 1.0
    dot = viz.to_dot(y)
    assert dot.count("MulBackward0") == 3000
    buf = io.StringIO()
    viz.print_graph(y, file=buf)
    assert len(buf.getvalue().splitlines()) == 3001


def test_show_constants_draws_no_grad_tensor_args():
    x = torch.ones(3, requires_grad=True)
    c = torch.full((3,), 2.0)
    y = x * c
    assert "no grad" not in viz.to_dot(y)
    dot = viz.to_dot(y, show_constants=True)
    assert "no grad\\n(3,) float32" in dot
    buf = io.StringIO()
    viz.print_graph(y, file=buf, show_constants=True)
    assert "(no grad) (3,) float32" in buf.getvalue()


def test_label_quoting():
    x = torch.ones(1, requires_grad=True)
    dot = viz.to_dot(x * 2.0, params={'odd "name"\\': x})
    assert 'odd \\"name\\"\\\\' in dot


def test_module_attribute():
    assert torch.viz is viz
