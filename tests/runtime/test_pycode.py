"""Generated Python compiled once per text (runtime/pycode.py): functions defined from one
code object in different namespaces each see their own bound objects."""

from runtime import pycode


def test_one_text_compiles_once_and_each_namespace_keeps_its_objects():
    src = "def check(x):\n    return x is OBJ and len(x) == N\n"
    code = pycode.code(src, "<test guards>")
    assert pycode.code(src, "<test guards>") is code
    a, b = [1, 2], [3]
    env_a, env_b = {"OBJ": a, "N": 2}, {"OBJ": b, "N": 1}
    exec(code, env_a)
    exec(code, env_b)
    assert env_a["check"](a) and not env_a["check"](b)
    assert env_b["check"](b) and not env_b["check"](a)
    assert env_a["check"].__code__.co_filename == "<test guards>"


def test_another_text_or_file_name_is_another_code_object():
    src = "def f():\n    return 1\n"
    assert pycode.code(src, "<a>") is not pycode.code(src, "<b>")
    assert pycode.code(src, "<a>") is not pycode.code(src + "\n", "<a>")
