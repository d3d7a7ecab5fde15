"""The runtime: devices (:mod:`.device`; :mod:`.cpu`, :mod:`.cuda`), loop planning for
kernel templates (:mod:`.plan`) and the kernel cache (:mod:`.cache`).

Imports point down only: ``runtime`` imports neither ``eager`` nor ``compiler``, and
generated kernels import only ``runtime``.
"""
