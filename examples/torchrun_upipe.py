"""UPipe context-parallel attention on ``torch.distributed``, checked against Ulysses and full attention.

Shows: each rank holds a contiguous ``S / C`` chunk of the sequence; ``UPipeAttention`` (headwise-chunked
Ulysses) computes the same attention as ``UlyssesAttention`` and as single-process ``ReferenceAttention`` on
the whole sequence (all three share one ``state_dict`` layout), for the forward output and the input
gradient, while holding fewer attention intermediates at a time (forward peak measured with
``LiveTensorBytes``). GQA: 8 query heads, 4 key/value heads. CPU, gloo backend.

Run:  torchrun --nproc_per_node=2 examples/torchrun_upipe.py        (about 5 s on CPU)
"""

import torch
import torch.distributed as dist

from icml26.core import set_threads
from icml26.upipe import (
    LiveTensorBytes,
    ReferenceAttention,
    UlyssesAttention,
    UPipeAttention,
    gather_sequence,
    shard_sequence,
)

B, S, E, H, HKV, D = 2, 256, 128, 8, 4, 16  # batch, sequence, embedding, query heads, kv heads, head dim


def run(attn: torch.nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Full-sequence output, input gradient and this rank's forward peak bytes of one context-parallel call."""
    x_local = shard_sequence(x, None, dim=1).detach().requires_grad_(True)  # [B, S/C, E]: this rank's tokens
    pos_local = shard_sequence(torch.arange(S), None, dim=0)
    with LiveTensorBytes() as mem:
        y_local = attn(x_local, pos_local)
    y_local.pow(2).sum().backward()
    return gather_sequence(y_local.detach(), None, dim=1), gather_sequence(x_local.grad, None, dim=1), mem.peak


def main() -> None:
    set_threads(1)  # one intra-op thread per rank: the ranks already share the CPU cores
    dist.init_process_group("gloo")  # torchrun sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # same weights and input on every rank
    ref = ReferenceAttention(E, H, HKV, D)
    x = torch.randn(B, S, E)

    x_full = x.clone().requires_grad_(True)
    y_ref = ref(x_full, torch.arange(S))
    y_ref.pow(2).sum().backward()

    results = {}
    for name, cls in (("upipe", UPipeAttention), ("ulysses", UlyssesAttention)):
        attn = cls(E, H, HKV, D, process_group=None)  # None = the default group (all ranks)
        attn.load_state_dict(ref.state_dict())
        results[name] = run(attn, x)

    if rank == 0:
        (y_up, g_up, peak_up), (y_ul, g_ul, peak_ul) = results["upipe"], results["ulysses"]
        print(f"context parallel over {world} ranks: S={S}, {H} heads ({HKV} kv), head_dim={D}")
        print(f"max |upipe - reference| output: {(y_up - y_ref).abs().max().item():.2e}")
        print(f"max |upipe - reference| grad:   {(g_up - x_full.grad).abs().max().item():.2e}")
        print(f"max |upipe - ulysses| output:   {(y_up - y_ul).abs().max().item():.2e}")
        print(f"max |upipe - ulysses| grad:     {(g_up - g_ul).abs().max().item():.2e}")
        print(f"forward peak bytes per rank: upipe {peak_up}, ulysses {peak_ul} ({peak_up / peak_ul:.2f}x)")
    # Every rank waits here before tearing down: a gloo group destroyed while a peer is still at work (rank 0
    # printing above) can abort the process at exit ("terminate called without an active exception").
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
