"""The same gossip training over ``torch.distributed`` processes (gloo on CPU, NCCL where users run it).

:func:`run_gossip` is the per-rank function: rank ``r`` of ``world_size`` owns a contiguous block of the nodes
(``numpy.array_split``), runs their ``K`` local SGD steps with the same per-(node, round) batches as
:class:`~icml26.trace_du.training.DecentralizedSGD`, exchanges the local models (``all_gather``: every rank needs
its neighbours' ``y_j``; for the small graphs here that is one collective per round), mixes
``x_i = sum_j W_ij y_j`` for its nodes and records its nodes' checkpoints and edge distances.  At the end the
blocks are gathered and rank 0 returns the whole :class:`~icml26.trace_du.training.Trajectory` (other ranks
return ``None``); it equals the in-process one up to floating-point summation order (same seed, same result).

:func:`spawn_gossip` starts ``world_size`` local processes (``torch.multiprocessing``, ``MASTER_ADDR=127.0.0.1``,
a free port, loopback only) and returns rank 0's trajectory.  With ``torchrun``, call :func:`run_gossip` from
your script after ``init_process_group``.
"""

from __future__ import annotations

import os
import socket
import tempfile
import traceback
from collections.abc import Sequence
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist

from .graphs import check_gossip_matrix
from .training import DecentralizedSGD, Trajectory

__all__ = ["run_gossip", "spawn_gossip", "node_blocks"]


def node_blocks(n: int, world_size: int) -> list[np.ndarray]:
    """The nodes each rank owns: ``numpy.array_split(range(n), world_size)`` (contiguous, sizes differ by <= 1)."""
    if isinstance(world_size, bool) or not isinstance(world_size, int) or not 1 <= world_size <= n:
        raise ValueError(f"world_size must be an integer in [1, {n}] (at most one rank per node), got {world_size!r}")
    return np.array_split(np.arange(n), world_size)


def run_gossip(
    rank: int,
    world_size: int,
    model,
    node_data: Sequence[tuple[torch.Tensor, torch.Tensor]],
    W: np.ndarray,
    *,
    local_steps: int = 5,
    lr: float = 0.5,
    batch_size: int = 16,
    rounds: int = 60,
    seed: int = 0,
    ckpt_every: int = 1,
    init: torch.Tensor | None = None,
) -> Trajectory | None:
    """Gossip training of ``model`` on this rank's block of nodes inside an initialised process group.

    Arguments as :class:`DecentralizedSGD` (every rank passes the same ones; a rank touches only its own nodes'
    data).  Returns the gathered :class:`Trajectory` on rank 0, ``None`` on the other ranks."""
    if not dist.is_initialized():
        raise RuntimeError("run_gossip needs an initialised process group (torch.distributed.init_process_group)")
    if dist.get_world_size() != world_size or dist.get_rank() != rank:
        raise ValueError(
            f"rank/world_size ({rank}, {world_size}) disagree with the process group "
            f"({dist.get_rank()}, {dist.get_world_size()})"
        )
    W = check_gossip_matrix(W)
    n = W.shape[0]
    blocks = node_blocks(n, world_size)
    mine = blocks[rank]
    # the in-process engine for this rank's nodes: it validates the arguments and owns the batch schedule
    eng = DecentralizedSGD(
        model,
        node_data,
        W,
        local_steps=local_steps,
        lr=lr,
        batch_size=batch_size,
        rounds=rounds,
        seed=seed,
        ckpt_every=ckpt_every,
        init=init,
    )
    local = DecentralizedSGD(
        model,
        [node_data[i] for i in mine],
        np.eye(len(mine)),
        local_steps=local_steps,
        lr=lr,
        batch_size=batch_size,
        rounds=rounds,
        seed=seed,
        ckpt_every=ckpt_every,
        node_ids=[int(i) for i in mine],
        init=eng.init[mine],
    )
    Wt = torch.as_tensor(W, dtype=torch.float64)
    mask = (W > 0) & ~np.eye(n, dtype=bool)
    sizes = [len(b) for b in blocks]
    p = model.n_params
    X = eng.init[mine].clone()
    ckpts, dists = {0: X.clone()}, np.zeros((rounds, len(mine), n))
    for t in range(rounds):
        Y = local.local_sgd(X, t)
        pad = torch.zeros(max(sizes), p, dtype=torch.float64)  # gloo gathers equal shapes: pad the smaller blocks
        pad[: len(mine)] = Y
        parts = [torch.empty_like(pad) for _ in sizes]
        dist.all_gather(parts, pad)
        Yall = torch.cat([part[:s] for part, s in zip(parts, sizes)])
        dists[t] = np.where(mask[mine], (Y[:, None] - Yall[None]).norm(dim=-1).numpy(), 0.0)
        X = Wt[mine] @ Yall
        if (t + 1) % ckpt_every == 0 or t + 1 == rounds:
            ckpts[t + 1] = X.clone()
    gathered: list = [None] * world_size
    dist.all_gather_object(gathered, (ckpts, dists))
    if rank != 0:
        return None
    full_ck = {t: torch.cat([g[0][t] for g in gathered]) for t in ckpts}
    full_d = np.concatenate([g[1] for g in gathered], axis=1)
    cfg = dict(local_steps=local_steps, lr=float(lr), batch_size=batch_size, seed=int(seed), ckpt_every=ckpt_every)
    return Trajectory(tuple(range(n)), W.copy(), 0, rounds, full_ck, full_d, cfg, model, list(node_data))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank, world_size, port, out_dir, args, kwargs, timeout_s):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=timeout_s))
    try:
        out = run_gossip(rank, world_size, *args, **kwargs)
        if rank == 0:
            torch.save(out, os.path.join(out_dir, "trajectory.pt"))
    except BaseException:
        with open(os.path.join(out_dir, f"rank{rank}.err"), "w") as fh:
            fh.write(traceback.format_exc())
        raise
    finally:
        dist.destroy_process_group()


def spawn_gossip(
    world_size: int, model, node_data, W, *, timeout_s: float = 120.0, start_method: str = "spawn", **kwargs
) -> Trajectory:
    """Run :func:`run_gossip` on ``world_size`` local gloo processes and return rank 0's :class:`Trajectory`."""
    import torch.multiprocessing as mp

    node_blocks(check_gossip_matrix(W).shape[0], world_size)
    if start_method not in ("spawn", "forkserver", "fork"):
        raise ValueError(f"start_method must be 'spawn', 'forkserver' or 'fork', got {start_method!r}")
    with tempfile.TemporaryDirectory(prefix="trace-du-") as out_dir:
        try:
            mp.start_processes(
                _worker,
                args=(world_size, _free_port(), out_dir, (model, list(node_data), W), kwargs, timeout_s),
                nprocs=world_size,
                join=True,
                start_method=start_method,
            )
        except (mp.ProcessRaisedException, mp.ProcessExitedException) as e:
            errs = [open(os.path.join(out_dir, f)).read() for f in sorted(os.listdir(out_dir)) if f.endswith(".err")]
            raise RuntimeError("a gossip rank failed:\n" + ("\n".join(errs) or str(e))) from None
        return torch.load(os.path.join(out_dir, "trajectory.pt"), weights_only=False)
