"""Train a Hugging Face ``transformers`` Llama with UPipe context parallelism (``attn_implementation="upipe"``).

Every rank holds the same model (same seed) and a contiguous chunk of each sequence with its global positions; the
attention layers exchange heads stage by stage over ``torch.distributed`` (gloo here, NCCL on GPUs). The labels are
shifted on the whole sequence before sharding, the token losses are summed over ranks, and the gradients are
all-reduced. Rank 0 compares the first step's loss and gradients with the same model on one process with ``sdpa``.

Run:  torchrun --nproc_per_node=2 examples/torchrun_hf_upipe.py        (about 10 s on CPU; needs the [lm] extra)
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, LlamaConfig

from icml26.core import set_threads
from icml26.upipe import register_hf_attention, shard_sequence

B, S, STEPS = 2, 64, 5
CONFIG = dict(
    vocab_size=128,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=8,
    num_key_value_heads=4,
    max_position_embeddings=S,
)


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids and next-token labels shifted on the whole sequence (same on every rank)."""
    g = torch.Generator().manual_seed(step)
    ids = torch.randint(0, CONFIG["vocab_size"], (B, S), generator=g)
    return ids, torch.cat([ids[:, 1:], torch.full((B, 1), -100)], dim=1)


def main() -> None:
    set_threads(1)  # the ranks share the CPU cores
    dist.init_process_group("gloo")  # torchrun sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    rank, world = dist.get_rank(), dist.get_world_size()
    register_hf_attention()  # "upipe" in transformers' AttentionInterface, over the default process group
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(LlamaConfig(**CONFIG), attn_implementation="upipe")
    torch.manual_seed(0)
    reference = AutoModelForCausalLM.from_config(LlamaConfig(**CONFIG), attn_implementation="sdpa")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    positions = torch.arange(S).expand(B, S)
    for step in range(STEPS):
        ids, labels = batch(0)  # one batch, fitted a few steps: the loss falls
        x, pos, y = (shard_sequence(z, None, dim=1) for z in (ids, positions, labels))  # this rank's S / C tokens
        logits = model(input_ids=x, position_ids=pos, use_cache=False).logits
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100, reduction="sum")
        loss = loss / int((labels != -100).sum())
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)  # each rank holds its tokens' share of the gradient
        total = loss.detach().clone()
        dist.all_reduce(total)
        if step == 0 and rank == 0:
            ref_loss = F.cross_entropy(reference(input_ids=ids, use_cache=False).logits.flatten(0, 1), labels.flatten())
            ref_loss.backward()
            worst = max(
                (p.grad - q.grad).abs().max().item()
                for p, q in zip(model.parameters(), reference.parameters(), strict=True)
            )
            print(f"{world} ranks, S={S}, {CONFIG['num_attention_heads']} heads, a Llama from a config")
            print(f"step 0 loss: upipe {total.item():.6f}, sdpa on one process {ref_loss.item():.6f}")
            print(f"max |grad upipe - grad sdpa|: {worst:.2e}")
        opt.step()
        if rank == 0:
            print(f"step {step} loss {total.item():.4f}")
    dist.barrier()  # no rank tears gloo down while a peer still prints
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
