"""Run a function on ``world_size`` real processes with an initialised process group, and collect results.

``spawn(fn, world_size)`` starts ``world_size`` processes (``torch.multiprocessing``; start method
``forkserver`` by default: one server process imports torch once and forks the ranks, much faster than
``spawn`` and, unlike a plain ``fork``, never copies a parent that has run parallel kernels), sets
``MASTER_ADDR=127.0.0.1`` and a free port, calls ``torch.distributed.init_process_group(backend,
timeout=timeout_s)`` and ``torch.set_num_threads(threads)`` in each, runs ``fn(rank, world_size, *args)``
and returns the list of per-rank return values (anything ``torch.save`` can store).  If any rank raises,
the others are terminated and a ``RuntimeError`` carrying that rank's traceback is raised in the caller,
so a failing rank cannot hang the rest; a rank stuck in a
collective whose peer never arrives fails after ``timeout_s``.
"""

from __future__ import annotations

import os
import socket
import tempfile
import traceback
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

__all__ = ["spawn", "free_port"]


def free_port() -> int:
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _errors(out_dir: str) -> str:
    """Every rank's traceback that was written before the ranks were stopped, rank by rank."""
    parts = []
    for name in sorted(f for f in os.listdir(out_dir) if f.endswith(".err")):
        with open(os.path.join(out_dir, name)) as fh:
            parts.append(f"--- {name[:-4]} ---\n{fh.read()}")
    return "\n".join(parts)


def _worker(rank, fn, world_size, backend, port, out_dir, args, timeout_s, threads):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(threads)
    dist.init_process_group(backend, rank=rank, world_size=world_size, timeout=timedelta(seconds=timeout_s))
    try:
        result = fn(rank, world_size, *args)
        torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
        dist.barrier()  # no rank tears gloo down while a peer still works (that can abort the process at exit)
    except BaseException:
        with open(os.path.join(out_dir, f"rank{rank}.err"), "w") as fh:
            fh.write(traceback.format_exc())
        raise
    finally:
        dist.destroy_process_group()


def spawn(
    fn: Callable[..., Any],
    world_size: int,
    backend: str = "gloo",
    args: tuple = (),
    timeout_s: float = 120.0,
    threads: int = 1,
    start_method: str = "forkserver",
) -> list[Any]:
    """Run ``fn(rank, world_size, *args)`` on ``world_size`` processes; return their results in rank order.

    ``fn`` must be importable by name (a module-level function).  ``timeout_s`` bounds every collective.
    """
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {world_size!r}")
    if backend not in ("gloo", "nccl", "mpi"):
        raise ValueError(f"backend must be 'gloo', 'nccl' or 'mpi', got {backend!r}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
    if not callable(fn):
        raise TypeError("fn must be callable")
    if start_method not in ("forkserver", "spawn", "fork"):
        raise ValueError(f"start_method must be 'forkserver', 'spawn' or 'fork', got {start_method!r}")
    if start_method == "forkserver":
        import multiprocessing.forkserver as fs

        fs.set_forkserver_preload(["torch", "torch.distributed", "icml26.upipe", fn.__module__])
    with tempfile.TemporaryDirectory(prefix="upipe-spawn-") as out_dir:
        try:
            mp.start_processes(
                _worker,
                args=(fn, world_size, backend, free_port(), out_dir, tuple(args), timeout_s, threads),
                nprocs=world_size,
                join=True,
                start_method=start_method,
            )
        except (mp.ProcessRaisedException, mp.ProcessExitedException) as e:
            raise RuntimeError(f"a rank failed (the other ranks were stopped):\n{_errors(out_dir) or e}") from None
        return [torch.load(os.path.join(out_dir, f"rank{r}.pt"), weights_only=False) for r in range(world_size)]
