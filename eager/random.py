"""Random number generators: :class:`Generator`, the default generator, and the functions
of ``torch.random`` (``manual_seed``, ``seed``, ``initial_seed``, ``get_rng_state``,
``set_rng_state``, ``fork_rng``).

A :class:`Generator` wraps a NumPy PCG64 bit generator.  Every random op takes the
generator as an op parameter (``generator=``; None means :data:`default_generator`), so a
compiled trace replays its draws from the same generator object on every call.  Seeding
semantics are PyTorch's (``Generator()`` starts from seed 67280421310721, the default
generator from a nondeterministic seed, ``manual_seed`` accepts any integer in
``[-2**63, 2**64)`` and wraps negatives), but the streams differ from PyTorch's: the same
seed gives the same numbers here run after run, not PyTorch's numbers.
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from ._state import STATE
from .tensor import Tensor
from .tensor import device as _device


class CudaGenerator:
    """The CUDA random generator: counter-based (a hash of seed and element counter), so a
    seed reproduces a run and nothing is stored per element."""

    def __init__(self):
        self.seed(int(np.random.SeedSequence().entropy % (1 << 62)))

    def seed(self, seed: int) -> None:
        self.initial = seed & ((1 << 63) - 1)
        self.offset = 0

    def take(self, n: int) -> tuple:
        """(seed, first counter) for ``n`` numbers; the next draw starts after them."""
        start = self.offset
        self.offset += max(int(n), 1)
        return self.initial, start


CUDA_GENERATOR = CudaGenerator()

_DEFAULT_SEED = 67280421310721   # PyTorch's seed of a new torch.Generator()
_U64 = 1 << 64
_STATE_BYTES = 48                # PCG64 state (16) + increment (16) + uint32 cache (8) + seed (8)
_ALL: weakref.WeakSet = weakref.WeakSet()


def _state_access(what: str) -> None:
    """A generator's state read or set into Python: a compiled trace cannot replay that
    (its random ops draw from the generator's live state), so the function runs eagerly."""
    if STATE.tracer is not None:
        STATE.tracer.on_unsupported(f"{what} inside a compiled function")


def _check_seed(seed, who: str = "manual_seed") -> int:
    if isinstance(seed, Tensor):
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"{who} expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed % _U64


def _fresh_seed() -> int:
    """A nondeterministic 64-bit seed (from the OS entropy pool)."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])


class Generator:
    """A random number generator (PyTorch's ``torch.Generator``): ``manual_seed``,
    ``seed``, ``initial_seed``, ``get_state``/``set_state``.  Pass it as ``generator=`` to
    any random function (``rand``, ``randn``, ``randint``, ``randperm``, ``bernoulli``,
    ``multinomial``, ``normal``, ``Tensor.normal_``/``uniform_``..., ``nn.init``)."""

    __slots__ = ("_rng", "_seed", "_device", "__weakref__")

    def __init__(self, device="cpu"):
        dev = _device(device)
        if dev.type != "cpu":
            raise RuntimeError(f"eager generators live on the cpu device; got device={device!r}")
        self._device = dev
        self._seed = _DEFAULT_SEED
        self._rng = np.random.Generator(np.random.PCG64(_DEFAULT_SEED))
        _ALL.add(self)

    @property
    def device(self):
        return self._device

    def manual_seed(self, seed) -> Generator:
        """Seed this generator (in place: compiled code holding it sees the new stream)."""
        _state_access("Generator.manual_seed")
        seed = _check_seed(seed)
        self._rng.bit_generator.state = np.random.PCG64(seed).state
        self._seed = seed
        return self

    def seed(self) -> int:
        """Seed from a nondeterministic source; returns the seed."""
        s = _fresh_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 tensor (for :meth:`set_state`)."""
        _state_access("Generator.get_state")
        st = self._rng.bit_generator.state
        words = [st["state"]["state"], st["state"]["inc"]]
        raw = b"".join(w.to_bytes(16, "little") for w in words)
        raw += int(st["has_uint32"]).to_bytes(4, "little")
        raw += int(st["uinteger"]).to_bytes(4, "little")
        raw += self._seed.to_bytes(8, "little")
        return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        _state_access("Generator.set_state")
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        arr = new_state._data
        if arr.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if arr.size != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but "
                               f"found the input RNG state size to be {arr.size}")
        raw = arr.reshape(-1).tobytes()
        self._rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[0:16], "little"),
                      "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": int.from_bytes(raw[32:36], "little"),
            "uinteger": int.from_bytes(raw[36:40], "little"),
        }
        self._seed = int.from_bytes(raw[40:48], "little")
        return self

    def __getstate__(self):   # pickling (DataLoader workers, torch.save): the full state
        return {"device": str(self._device), "state": self.get_state()._data.tobytes()}

    def __setstate__(self, d):
        self.__init__(d["device"])
        self.set_state(Tensor._make(np.frombuffer(d["state"], dtype=np.uint8).copy()))

    def __repr__(self):
        return f"<eager.Generator object at {id(self):#x}>"


default_generator = Generator()
default_generator.manual_seed(_fresh_seed())


def check(generator, who: str):
    """``generator`` itself (None: the default generator, resolved by the op), or PyTorch's
    TypeError for anything but an :class:`Generator`."""
    if generator is not None and type(generator) is not Generator:
        raise TypeError(f"{who}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator


def manual_seed(seed) -> Generator:
    """Seed the default generator every random op draws from (eager and compiled alike),
    and the CUDA generator (as PyTorch: one seed for every device)."""
    g = default_generator.manual_seed(seed)
    CUDA_GENERATOR.seed(g.initial_seed())
    return g


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, **kwargs):
    """Restore the default generator's state on exit (PyTorch's ``torch.random.fork_rng``)."""
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)


def snapshot() -> list:
    """The states of every live generator (the compiler restores them when a replay fails a
    guard after drawing, so the eager rerun draws the same numbers)."""
    return [(g, g._rng.bit_generator.state) for g in list(_ALL)]


def restore(snap: list) -> None:
    for g, st in snap:
        g._rng.bit_generator.state = st
