"""One attention layer, UPipe vs Ulysses vs Ring, on GPUs (NCCL) or CPU ranks (gloo): memory, time, equality.

:func:`run_benchmark` measures every (sequence length, method) pair in its own process group (one
:func:`~icml26.upipe.testing.spawn` each), so a configuration that runs out of memory costs only its own row:
its ranks run under a :class:`~icml26.upipe._oom.CollectiveOOMGuard` (the rank that runs out flags it in
the store, its peers stop within a second) and the row says ``OOM``.  In every group all ranks seed the same
generator, build the same weights (then take rank 0's, to be sure) and the same global input, and keep their
contiguous ``S / C`` tokens.  Per rank it records the forward peak, the bytes still held after the forward
(saved for backward, the output excluded) and the whole-step peak above the memory allocated before the
forward (CUDA: ``torch.cuda.max_memory_allocated``, so kernel workspaces count; CPU: live tensor bytes), the
median time of ``repeats`` forward+backward steps after one warm-up, and a fixed random sample of the
output and input-gradient entries, which :func:`run_benchmark` compares with Ulysses's (the equality column).
``benchmarks/upipe_gpu.py`` is the command line.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict, dataclass

import torch
import torch.distributed as dist

from icml26.core import Table, atomic_write_text, to_jsonable

from ._kernel import kernel_name
from ._oom import OOM_EXIT_CODE, CollectiveOOMGuard
from .geometry import HeadGeometry
from .memory import LiveTensorBytes, attention_bytes_formula
from .testing import spawn

__all__ = ["BenchSpec", "bench_layer", "run_benchmark", "markdown_table", "write_json"]

MiB = 2**20


@dataclass(frozen=True)
class BenchSpec:
    """Layer shape and run settings (Llama 3-like defaults: H = 32 query heads, Hkv = 8 KV heads, d = 128)."""

    dim: int = 4096
    heads: int = 32
    kv_heads: int = 8
    head_dim: int = 128
    dtype: str = "bfloat16"
    repeats: int = 3
    seed: int = 0
    samples: int = 65536  # output / input-gradient entries compared with Ulysses
    device: str = "cuda"  # "cuda" (one GPU per rank) or "cpu"

    def __post_init__(self) -> None:
        for name in ("dim", "heads", "kv_heads", "head_dim", "repeats", "samples"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        if self.dtype not in ("float32", "bfloat16", "float16"):
            raise ValueError(f"dtype must be 'float32', 'bfloat16' or 'float16', got {self.dtype!r}")
        if self.device not in ("cuda", "cpu"):
            raise ValueError(f"device must be 'cuda' or 'cpu', got {self.device!r}")


_METHODS = {"ulysses": ("ulysses", None), "upipe": ("upipe", None), "upipe2": ("upipe", 2), "ring": ("ring", None)}


def _layer(method: str, u: int | None, spec: BenchSpec):
    from ._measure import LAYERS

    return LAYERS[method](spec.dim, spec.heads, spec.kv_heads, spec.head_dim, None, u, True)


class _Meter:
    """Peak-above-baseline bytes: the CUDA allocator on GPU, live tensor bytes on CPU."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self.device = device
        self.live = None if self.cuda else LiveTensorBytes(record_timeline=False)

    def __enter__(self):
        if self.cuda:
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self.base = torch.cuda.memory_allocated(self.device)
        else:
            self.live.__enter__()
            self.base = self.live.current
        return self

    def now(self) -> int:
        if self.cuda:
            torch.cuda.synchronize(self.device)
            return torch.cuda.memory_allocated(self.device) - self.base
        return self.live.current - self.base

    def peak(self) -> int:
        if self.cuda:
            torch.cuda.synchronize(self.device)
            return torch.cuda.max_memory_allocated(self.device) - self.base
        return self.live.peak - self.base

    def __exit__(self, *exc):
        if not self.cuda:
            self.live.__exit__(*exc)
        return False


def bench_layer(rank: int, world: int, name: str, s: int, spec: BenchSpec, inject_oom_rank: int = -1) -> dict:
    """Measure method ``name`` (``ulysses``, ``upipe`` (U = C), ``upipe2`` (U = 2C) or ``ring``) at global
    length ``s`` on this rank; ``inject_oom_rank`` raises a synthetic ``OutOfMemoryError`` on that rank before
    its forward (to test the collective stop)."""
    from .model import broadcast_parameters
    from .train import resolve_device

    device = resolve_device(spec.device, "nccl" if spec.device == "cuda" else "gloo", rank)
    dtype = getattr(torch, spec.dtype)
    method, u_factor = _METHODS[name]
    u = None if u_factor is None else u_factor * world
    t = s // world
    with CollectiveOOMGuard(key=f"icml26/upipe/oom/{name}/{s}"):
        torch.manual_seed(spec.seed)
        mod = _layer(method, u, spec).to(device=device, dtype=dtype)
        broadcast_parameters(mod)
        # each rank draws only its own chunk of the global input and output gradient, from a per-chunk seed (so
        # every method at this (world, S) sees the same global tensors, and no rank ever holds all S positions:
        # at S = 1M in fp32 the global pair alone would be 32 GiB per rank)
        gen = torch.Generator(device="cpu").manual_seed((spec.seed + 1) * 1_000_003 + rank)
        x = torch.randn(1, t, spec.dim, generator=gen).to(device=device, dtype=dtype).requires_grad_(True)
        dy = torch.randn(1, t, spec.dim, generator=gen).to(device=device, dtype=dtype)
        pos = torch.arange(rank * t, (rank + 1) * t, device=device)
        idx = torch.randint(0, t * spec.dim, (min(spec.samples, t * spec.dim),), generator=gen).to(device)
        if rank == inject_oom_rank:
            raise torch.OutOfMemoryError(f"synthetic out-of-memory on rank {rank} ({name}, S={s})")
        times, y_sample, dx_sample = [], None, None
        fwd = held = total = 0
        for k in range(spec.repeats + 1):
            x.grad = None
            for p in mod.parameters():
                p.grad = None
            if world > 1:
                dist.barrier()
            with _Meter(device) as meter:
                t0 = time.perf_counter()
                y = mod(x, pos)
                fwd = meter.peak()
                held = meter.now() - y.untyped_storage().nbytes()
                y.backward(dy)
                total = meter.peak()
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                dt = time.perf_counter() - t0
            if k == 0:
                y_sample = y.detach().flatten()[idx].double().cpu()
                dx_sample = x.grad.flatten()[idx].double().cpu()
            else:
                times.append(dt)
            del y
    return {
        "fwd_peak": fwd,
        "saved": held,
        "step_peak": total,
        "time_s": statistics.median(times),
        "y_sample": y_sample,
        "dx_sample": dx_sample,
        "kernel": kernel_name(device, dtype, spec.head_dim),
    }


def _oom_failure(err: RuntimeError) -> bool:
    text = str(err)
    return "OutOfMemoryError" in text or f"exit code {OOM_EXIT_CODE}" in text


def run_benchmark(
    seq_lens: list[int],
    methods: list[str],
    world: int,
    spec: BenchSpec,
    backend: str = "nccl",
    timeout_s: float = 600.0,
    inject_oom: tuple[str, int, int] | None = None,
    progress=print,
) -> list[dict]:
    """One row per (S, method): per-rank maxima of the byte counts (MiB) and of the median step time, the
    formula's forward peak and saved bytes (UPipe and Ulysses), ratios against Ulysses, and the largest
    difference of the sampled output / input-gradient entries from Ulysses's (``OOM`` rows have no numbers).

    ``inject_oom=(method, S, rank)`` makes that rank of that configuration run out of memory (a test hook).
    """
    for name in methods:
        if name not in _METHODS:
            raise ValueError(f"methods must be among {sorted(_METHODS)}, got {name!r}")
    if isinstance(world, bool) or not isinstance(world, int) or world < 1:
        raise ValueError(f"world must be an integer >= 1, got {world!r}")
    if any(_METHODS[n][0] != "ring" for n in methods):  # head/world checks here, not inside a spawned rank
        HeadGeometry.build(world, spec.heads, spec.kv_heads)
    for s in seq_lens:
        if isinstance(s, bool) or not isinstance(s, int) or s < 1 or s % world:
            raise ValueError(f"every sequence length must be a positive multiple of world ({world}), got {s!r}")
    elem = torch.finfo(getattr(torch, spec.dtype)).bits // 8
    rows = []
    for s in seq_lens:
        by_method: dict[str, list[dict] | None] = {}
        for name in methods:
            method, u_factor = _METHODS[name]
            u = None if u_factor is None else u_factor * world
            if u is not None and (spec.heads % u):
                continue
            bad = inject_oom[2] if inject_oom is not None and inject_oom[:2] == (name, s) else -1
            t0 = time.perf_counter()
            try:
                per_rank = spawn(bench_layer, world, backend=backend, args=(name, s, spec, bad), timeout_s=timeout_s)
            except RuntimeError as e:
                if not _oom_failure(e):
                    raise
                per_rank = None
            by_method[name] = per_rank
            row: dict = {"S": s, "C": world, "method": name, "wall_s": round(time.perf_counter() - t0, 1)}
            if per_rank is None:
                row["note"] = "OOM"
            else:
                row.update({k: max(r[k] for r in per_rank) / MiB for k in ("fwd_peak", "saved", "step_peak")})
                row["time_s"] = max(r["time_s"] for r in per_rank)
                row["kernel"] = per_rank[0]["kernel"]
                if method in ("ulysses", "upipe"):
                    f = attention_bytes_formula(
                        method, s, world, spec.heads, spec.kv_heads, spec.head_dim, spec.dim, u, elem_bytes=elem
                    )
                    row["fwd_formula"] = f["fwd_peak"] / MiB
                    row["saved_formula"] = f["saved"] / MiB
                base = by_method.get("ulysses")
                if base is not None and name != "ulysses":
                    row["max_dy_vs_ulysses"] = max(
                        float((r["y_sample"] - b["y_sample"]).abs().max()) for r, b in zip(per_rank, base)
                    )
                    row["max_ddx_vs_ulysses"] = max(
                        float((r["dx_sample"] - b["dx_sample"]).abs().max()) for r, b in zip(per_rank, base)
                    )
                    ref = next(x for x in rows if x["S"] == s and x["method"] == "ulysses")
                    for k in ("fwd_peak", "step_peak", "time_s"):
                        row[f"{k}/ulysses"] = row[k] / ref[k]
            rows.append(row)
            if progress is not None:
                progress(f"S={s} {name}: " + ("OOM" if per_rank is None else f"fwd {row['fwd_peak']:.1f} MiB"))
    return rows


def markdown_table(rows: list[dict]) -> str:
    """The rows as a markdown table (the reports' own :meth:`icml26.core.report.Table.to_markdown`)."""
    return Table("upipe_gpu", rows).to_markdown()


def write_json(path: str, rows: list[dict], spec: BenchSpec, world: int) -> None:
    """Write the rows and settings atomically (:func:`icml26.core.atomic_write_text`)."""
    payload = {"spec": asdict(spec), "world": world, "torch": torch.__version__, "rows": rows}
    if spec.device == "cuda" and torch.cuda.is_available():
        payload["gpu"] = torch.cuda.get_device_name(0)
    atomic_write_text(path, json.dumps(to_jsonable(payload), indent=1))
