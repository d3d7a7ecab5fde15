#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, numba-cuda and the project's dependencies already installed,
# with pytest-xdist and pytest-timeout (the device image has them; no network needed: the
# checkout runs from PYTHONPATH): the CUDA tests on the device, an
# example trained on it, then the `cuda` benchmark family. Each part is bounded by a timeout and
# logs under $OUT (default /tmp/gpu-check):
#     bash tools/gpu_check.sh                 # everything
#     TESTS="tests/gpu/test_ops.py" bash tools/gpu_check.sh
# Variables: PYTHON (python3), JOBS (pytest-xdist workers, 12), TEST_S / EXAMPLE_S / BENCH_S
# (seconds for each part), TESTS (what pytest runs), K (its -k, "cuda or gpu"), BENCH_ARGS
# (the benchmark's options, "--quick"; "" runs torch.compile too).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/gpu-check}"
mkdir -p "$out"
py="${PYTHON:-python3}"
# numba-cuda 0.30 registers an overload of np.row_stack, which NumPy 2.5 removed: on an image
# that pairs them (the `cuda` extra keeps NumPy below 2.5), a sitecustomize puts the alias back
shim="$(mktemp -d)"
printf '%s\n' 'import numpy' 'if not hasattr(numpy, "row_stack"):' \
    '    numpy.row_stack = numpy.vstack' > "$shim/sitecustomize.py"
export PYTHONPATH="$PWD:$shim${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
# one kernel cache for every test worker, so each kernel is compiled once
export DYNGRAPH_CACHE_DIR="${DYNGRAPH_CACHE_DIR:-$(mktemp -d)}"
unset NUMBA_ENABLE_CUDASIM

{
    nvidia-smi -L
    "$py" - <<'EOF'
import sys, numpy, numba, importlib.metadata as md
print("python", sys.version.split()[0], "numpy", numpy.__version__, "numba", numba.__version__)
for d in ("numba-cuda", "cupy-cuda13x", "torch"):
    try:
        print(d, md.version(d))
    except md.PackageNotFoundError:
        print(d, "missing")
import eager
print("eager.cuda.is_available()", eager.cuda.is_available())
if not eager.cuda.is_available():
    from numba import cuda
    cuda.detect()
EOF
} 2>&1 | tee "$out/env.log"

# shellcheck disable=SC2086
timeout "${TEST_S:-330}" "$py" -m pytest ${TESTS:-tests/gpu tests/ops} -k "${K:-cuda or gpu}" \
    -p no:cacheprovider -n "${JOBS:-12}" --timeout 240 -rfE --durations=15 \
    --junitxml="$out/tests.xml" 2>&1 | tee "$out/tests.log"
echo "tests: exit ${PIPESTATUS[0]}" | tee -a "$out/tests.log"

timeout "${EXAMPLE_S:-60}" "$py" examples/train_mlp.py --device cuda 2>&1 | tee "$out/example.log"
echo "example: exit ${PIPESTATUS[0]}" | tee -a "$out/example.log"

# shellcheck disable=SC2086
timeout "${BENCH_S:-150}" "$py" -m benchmarks --only cuda ${BENCH_ARGS---quick} --json "$out/bench.json" \
    2>&1 | tee "$out/bench.log"
echo "bench: exit ${PIPESTATUS[0]}" | tee -a "$out/bench.log"
