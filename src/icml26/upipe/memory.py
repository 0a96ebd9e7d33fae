"""Live tensor bytes on any device, by watching every op's outputs (a ``TorchDispatchMode``).

CPU tensors have no allocator statistics (``tracemalloc`` does not see torch's allocations), so
:class:`LiveTensorBytes` counts them itself: every storage an op returns while the mode is active is added
once (deduplicated by its data pointer; an output that shares the storage of one of the op's inputs, a view
or an in-place result, adds nothing, so tensors made before the mode are never counted through their views), and a
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

__all__ = ["LiveTensorBytes", "AllocatorBytes", "attention_bytes_formula"]


def _storage_key(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


class LiveTensorBytes(TorchDispatchMode):
    """Context manager that tracks live tensor bytes with per-phase peaks.

    ```python
    with LiveTensorBytes() as mem:
        with mem.phase("forward"):
            y = model(x)
    mem.peak, mem.phases["forward"]["peak"]
    ```

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
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        inputs = {_storage_key(t) for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and _storage_key(t) not in inputs:
                self._track(t)
        return out

    def _track(self, t: torch.Tensor) -> None:
        """Count the storage of a tensor an op just created (views and in-place results share an input's)."""
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


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2 for the block (kineto prints a line to it at every profiler start and stop)."""
    import os
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class AllocatorBytes:
    """Peak bytes the allocator handed out inside the block, above its level at entry (``torch.profiler``).

    Where :class:`LiveTensorBytes` sees only tensors that ops return, the profiler's memory events record
    every allocation and free of the CPU (and CUDA) caching allocator, kernel-internal scratch included; the
    events are replayed in time order and ``peak`` is the highest running sum.  Slower (a profiler session),
    so used as a second column beside the live-tensor count, not instead of it.

    ```python
    with AllocatorBytes() as alloc:
        y = layer(x, pos)
    alloc.peak
    ```
    """

    def __init__(self) -> None:
        self.peak = 0
        self.events = 0
        self._prof = None

    def __enter__(self) -> AllocatorBytes:
        import warnings

        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
        with warnings.catch_warnings(), _quiet_stderr():
            warnings.simplefilter("ignore")
            self._prof = profile(activities=acts, profile_memory=True)
            self._prof.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        import warnings

        with warnings.catch_warnings(), _quiet_stderr():
            warnings.simplefilter("ignore")
            self._prof.__exit__(*exc)
        events = [e for e in self._prof.profiler.kineto_results.events() if e.name() == "[memory]"]
        events.sort(key=lambda e: e.start_ns())  # a stable sort: simultaneous events keep their order
        current = peak = 0
        for e in events:
            current += e.nbytes()
            peak = max(peak, current)
        self.peak, self.events = peak, len(events)
        self._prof = None
        return False


def attention_bytes_formula(
    method: str,
    seq_len: int,
    cp_size: int,
    num_heads: int,
    num_kv_heads: int,
    head_dim: int,
    embed_dim: int,
    heads_per_stage: int | None = None,
    batch: int = 1,
    elem_bytes: int = 4,
) -> dict[str, int]:
    """Analytic per-rank live bytes of one attention layer (our implementations), for ``fwd_peak`` and ``saved``.

    With ``T = S / C`` local tokens, ``A = B T H d`` bytes-per-element (one full-width Q), ``Akv = B T Hkv' d``,
    ``L = 4 B T H`` (fp32 log-sum-exp), ``R = B T d`` (cos and sin, ``d/2`` each) and ``Y = B T E`` (the output):

    * Ulysses saves ``q, k, v, out`` (head-sharded) and the output after the all-to-all back:
      ``saved = 3A + 2Akv + L + R``; its forward peak is the largest of three moments: while ``v`` is being
      all-to-all'd (``2A + 5Akv + R``), while ``out`` is all-to-all'd back (``4A + 2Akv + L + R``) and at the
      end (``saved + Y``).
    * UPipe saves only the output buffer: ``saved = A + L + R``; its forward peak is the larger of the end
      (``A + L + R + Y``) and the all-to-all of a stage's queries, when the buffer, the preallocated
      log-sum-exp, the stage's K and V and three query-sized tensors (projection, send and receive buffers)
      are live: ``A + L + R + 3a + 2akv`` with ``a = A U / H`` and ``akv`` the stage's KV bytes; or inside the
      kernel, ``A + L + R + 2a + 2akv + l`` (``l`` the stage's log-sum-exp) plus ``2a`` when GQA with ``U > C``
      makes the kernel repeat each rank's K/V heads to its query-head count.

    With ``C = 1`` there is no exchange, so one buffer replaces each send/receive pair (UPipe); the Ulysses
    terms assume ``C >= 2`` (with one rank some of its layout changes become views and it uses less).  Kernel-internal
    scratch and the backend's transport buffers are not tensors and are not included (nor measured).
    """
    if method not in ("ulysses", "upipe"):
        raise ValueError(f"method must be 'ulysses' or 'upipe', got {method!r}")
    from .geometry import HeadGeometry

    geo = HeadGeometry.build(cp_size, num_heads, num_kv_heads, heads_per_stage)
    if seq_len % cp_size:
        raise ValueError(f"seq_len ({seq_len}) must be divisible by cp_size ({cp_size})")
    t = seq_len // cp_size
    a_q = batch * t * num_heads * head_dim * elem_bytes
    a_kv = batch * t * geo.kv_heads_eff * head_dim * elem_bytes
    lse = 4 * batch * t * num_heads
    rope = batch * t * head_dim * elem_bytes
    y = batch * t * embed_dim * elem_bytes
    k = 2 if cp_size > 1 else 1  # exchange buffers live at once: send + receive (one when C = 1: no exchange)
    if method == "ulysses":
        saved = 3 * a_q + 2 * a_kv + lse + rope
        peak = max(2 * a_q + (3 + k) * a_kv + rope, (2 + k) * a_q + 2 * a_kv + lse + rope, saved + y)
        return {"saved": saved, "fwd_peak": peak}
    a = a_q * geo.heads_per_stage // num_heads
    kv_per_rank = max(1, geo.heads_per_rank // geo.group_size_eff)
    akv = batch * t * cp_size * kv_per_rank * head_dim * elem_bytes
    saved = a_q + lse + rope
    # inside the kernel: q, k, v, the stage's output and log-sum-exp, and, when a rank's query heads share
    # fewer KV heads (GQA with U > C), the K/V copies repeated to the query-head count
    expanded = 2 * a if geo.heads_per_rank > kv_per_rank else 0
    kernel = a_q + lse + rope + 2 * a + 2 * akv + expanded + lse * geo.heads_per_stage // num_heads
    peak = max(saved + y, a_q + lse + rope + (1 + k) * a + 2 * akv, kernel)
    return {"saved": saved, "fwd_peak": peak}
