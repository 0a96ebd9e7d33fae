"""Live tensor bytes on any device, by watching every op's outputs (a ``TorchDispatchMode``).

CPU tensors have no allocator statistics (``tracemalloc`` does not see torch's allocations), so
:class:`LiveTensorBytes` counts them itself: every storage an op returns while the mode is active is added
once (deduplicated by its data pointer, so views and in-place results add nothing), and a
``weakref.finalize`` on the storage subtracts its ``nbytes`` when it is freed.  ``current`` and ``peak`` are
exact for tensors created under the mode.  Not counted: tensors that existed before the mode was entered
(parameters, inputs; measure *excess* over ``current`` at entry), and memory an op allocates internally
without returning it (e.g. per-thread scratch in a kernel, gloo's transport buffers).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

__all__ = ["LiveTensorBytes"]


class LiveTensorBytes(TorchDispatchMode):
    """Context manager that tracks live tensor bytes with per-phase peaks.

    >>> with LiveTensorBytes() as mem:
    ...     with mem.phase("forward"):
    ...         y = model(x)
    >>> mem.peak, mem.phases["forward"]["peak"]

    Attributes: ``current`` (bytes now live among tracked storages), ``peak`` (max of ``current`` since entry
    or :meth:`reset_peak`), ``phases`` (``name -> {"start", "peak", "end"}`` bytes) and ``timeline``
    (``(event index, current bytes, phase)`` after each allocation and free, for plots).
    """

    def __init__(self, record_timeline: bool = True) -> None:
        super().__init__()
        self.current = 0
        self.peak = 0
        self.phases: dict[str, dict[str, int]] = {}
        self.timeline: list[tuple[int, int, str]] = []
        self.record_timeline = bool(record_timeline)
        self._live: dict[int, int] = {}
        self._phase: list[str] = []
        self._events = 0

    # -- dispatch ------------------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self._track(t)
        return out

    def _track(self, t: torch.Tensor) -> None:
        try:
            st = t.untyped_storage()
        except (RuntimeError, NotImplementedError):  # tensors without storage (e.g. some subclasses)
            return
        key, n = st.data_ptr(), st.nbytes()
        if n == 0 or key in self._live:
            return
        self._live[key] = n
        weakref.finalize(st, self._free, key)
        self._add(n)

    def _free(self, key: int) -> None:
        n = self._live.pop(key, 0)
        if n:
            self._add(-n)

    def _add(self, n: int) -> None:
        self.current += n
        if self.current > self.peak:
            self.peak = self.current
        for name in self._phase:
            rec = self.phases[name]
            if self.current > rec["peak"]:
                rec["peak"] = self.current
        if self.record_timeline:
            self._events += 1
            self.timeline.append((self._events, self.current, self._phase[-1] if self._phase else ""))

    # -- public helpers ------------------------------------------------------------------------------------
    def reset_peak(self) -> None:
        """Set ``peak`` to ``current`` (later peaks are measured from here)."""
        self.peak = self.current

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[dict[str, int]]:
        """Record ``start``, ``peak`` and ``end`` live bytes of the enclosed block under ``phases[name]``."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        rec = {"start": self.current, "peak": self.current, "end": self.current}
        self.phases[name] = rec
        self._phase.append(name)
        try:
            yield rec
        finally:
            self._phase.remove(name)
            rec["end"] = self.current
