"""Compile recorded CUDA kernels for real GPUs, without one.

``python -m runtime.cuda.ptxcheck DIR [--arch sm_80 sm_90]`` reads the kernels that a run
with ``DYNGRAPH_CUDA_KERNEL_LOG=DIR`` launched (source text, kernel name, argument
types; typically the test suite under the simulator), compiles each to PTX with
``numba.cuda.compile_ptx`` (NVVM from the ``nvidia-nvvm`` wheel) and links it to a cubin
for each architecture with nvJitLink (``nvidia-nvjitlink``): real code generation,
checked on every change, no GPU or driver needed.  Exits 1 when any kernel fails.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import json
import os
import sys
import time

from ..cache import load_module
from . import nvvm_fma


def numba_type(desc):
    import numpy as np
    from numba import types
    from numba.np.numpy_support import from_dtype
    kind = desc[0]
    if kind == "array":
        return types.Array(from_dtype(np.dtype(desc[1])), desc[2], "C")
    if kind == "scalar":
        return from_dtype(np.dtype(desc[1]))
    if kind == "int64":
        return types.int64
    if kind == "float64":
        return types.float64
    if kind == "bool":
        return types.boolean
    if kind == "tuple":
        items = [numba_type(d) for d in desc[1]]
        if items and all(t == items[0] for t in items):
            return types.UniTuple(items[0], len(items))
        return types.Tuple(items)
    raise ValueError(f"unknown argument type {desc!r}")


def link_cubin(ptx: str, arch: str) -> bytes:
    """Link PTX to a cubin for ``arch`` (``sm_80``) with nvJitLink."""
    from cuda.bindings import nvjitlink
    handle = nvjitlink.create(1, [f"-arch={arch}"])
    try:
        data = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
        nvjitlink.complete(handle)
        cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, cubin)
    except Exception as e:
        size = nvjitlink.get_error_log_size(handle)
        log = bytearray(size)
        if size:
            nvjitlink.get_error_log(handle, log)
        raise RuntimeError(f"nvJitLink failed for {arch}: {e}: "
                           f"{log.decode(errors='replace')}") from e
    finally:
        nvjitlink.destroy(handle)
    return bytes(cubin)


class _Target:
    """Stands for the GPU when none is present: numba-cuda compiles the device functions
    a kernel calls for the current device's compute capability."""

    def __init__(self, cc):
        self.compute_capability = cc


def ptx(record: dict, arch: str) -> str:
    """The PTX of one recorded kernel for ``arch`` (``sm_80``), compiled as a launch
    compiles it (NVVM's ``-fma`` from the module's ``NVVM_FMA``: :func:`runtime.cuda.nvvm_fma`)."""
    from numba import cuda
    from numba.cuda import dispatcher
    mod = load_module(record["source"], prefix="dgc")
    pyfunc = getattr(mod, record["name"]).py_func
    sig = tuple(numba_type(d) for d in record["signature"])
    cc = (int(arch[3:-1]), int(arch[-1]))
    real = dispatcher.get_current_device
    try:
        dispatcher.get_current_device = lambda: _Target(cc)
        with nvvm_fma(mod):
            text, _ = cuda.compile_ptx(pyfunc, sig, cc=cc)
    finally:
        dispatcher.get_current_device = real
    return text


def check(record: dict, archs: list) -> dict:
    """Compile one recorded kernel to PTX and a cubin per architecture; returns the cubin
    sizes.  Raises what NVVM or nvJitLink raise."""
    return {arch: len(link_cubin(ptx(record, arch), arch)) for arch in archs}


def check_files(paths: list, archs: list) -> list:
    """Check the recorded kernels in ``paths``; one line per failure."""
    failures = []
    for path in paths:
        with open(path) as f:
            record = json.load(f)
        try:
            check(record, archs)
        except Exception as e:
            first = record["source"].split("def ", 1)[-1].split("\n", 1)[0]
            failures.append(f"FAILED {os.path.basename(path)} ({record['name']}: {first}): "
                            f"{type(e).__name__}: {str(e)[:500]}")
    return failures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("--arch", nargs="+", default=["sm_80", "sm_90"])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="processes compiling side by side (default: one per core)")
    args = ap.parse_args(argv)
    files = sorted(glob.glob(os.path.join(args.directory, "*.json")))
    if not files:
        print(f"ptxcheck: no recorded kernels in {args.directory}")
        return 1
    t0 = time.perf_counter()
    jobs = max(1, min(args.jobs, len(files)))
    if jobs == 1:
        failures = check_files(files, args.arch)
    else:   # NVVM is single-threaded: one share of the kernels per process
        with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
            shares = pool.map(check_files, [files[i::jobs] for i in range(jobs)],
                              [args.arch] * jobs)
            failures = [line for share in shares for line in share]
    for line in failures:
        print(line)
    n, failed = len(files), len(failures)
    print(f"ptxcheck: {n - failed} passed, {failed} failed: {n} kernels compiled to PTX and "
          f"linked for {', '.join(args.arch)} in {time.perf_counter() - t0:.1f} s "
          f"({jobs} processes)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
