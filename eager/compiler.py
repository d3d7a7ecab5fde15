"""``eager.compiler``: PyTorch's ``torch.compiler`` namespace (``reset``, ``disable``,
``is_compiling``, ``wait``, ``explain``...), which is the :mod:`compiler` package itself.

``import eager.compiler`` (or the attribute ``eager.compiler``) loads the compiler; importing
``eager`` alone never does.  This module replaces itself in ``sys.modules`` with the package,
so ``eager.compiler is compiler``.
"""

import sys

import compiler as _compiler

sys.modules[__name__] = _compiler
