"""Per-rank check functions run under :func:`icml26.upipe.testing.spawn` (by the tests and the experiment)."""

from __future__ import annotations

import torch
import torch.distributed as dist

from ._comm import shard_sequence
from .attention import ReferenceAttention, RingAttention, UlyssesAttention, UPipeAttention

METHODS = {"upipe": UPipeAttention, "ulysses": UlyssesAttention, "ring": RingAttention}


def tolerance_excess(a: torch.Tensor, b: torch.Tensor, rtol: float) -> float:
    """``max(|a - b| - rtol |b|)``: at most ``atol`` iff ``torch.allclose(a, b, rtol, atol)``."""
    return float(((a - b).abs() - rtol * b.abs()).max())


def reference_grads(cfg: dict, seed: int, dtype=torch.float32):
    """Reference module, full input, output and gradients (computed identically on every rank)."""
    g = torch.Generator().manual_seed(seed)
    e, b, s = cfg["E"], cfg.get("B", 1), cfg["S"]
    ref = ReferenceAttention(e, cfg["H"], cfg["Hkv"], cfg["d"], causal=cfg["causal"]).to(dtype)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=dtype) * e**-0.5)
    x = torch.randn(b, s, e, generator=g, dtype=dtype, requires_grad=True)
    w = torch.randn(b, s, e, generator=g, dtype=dtype)
    pos = torch.arange(s)
    y = ref(x, pos)
    (y * w).sum().backward()
    grads = {n: p.grad.clone() for n, p in ref.named_parameters()}
    return ref, x.detach(), w, pos, y.detach(), x.grad.clone(), grads


def compare_methods(rank: int, world: int, configs: list[dict], seed: int, rtol: float = 1e-4, dtype=torch.float32):
    """For each config and method: the worst tolerance excess over y, dx, dWq, dWk, dWv, dWo (see above)."""
    rows = []
    for cfg in configs:
        ref, x, w, pos, y_ref, dx_ref, g_ref = reference_grads(cfg, seed, dtype)
        for name in cfg.get("methods", list(METHODS)):
            mod = METHODS[name](cfg["E"], cfg["H"], cfg["Hkv"], cfg["d"], None, cfg.get("U"), cfg["causal"]).to(dtype)
            mod.load_state_dict(ref.state_dict())
            xl = shard_sequence(x).clone().requires_grad_(True)
            y = mod(xl, shard_sequence(pos, dim=0))
            (y * shard_sequence(w)).sum().backward()
            errs = {"y": tolerance_excess(y.detach(), shard_sequence(y_ref), rtol)}
            errs["dx"] = tolerance_excess(xl.grad, shard_sequence(dx_ref), rtol)
            names = [n for n, _ in mod.named_parameters()]
            flat = torch.cat([p.grad.reshape(-1) for p in mod.parameters()])
            if world > 1:
                dist.all_reduce(flat)  # weights are replicated over the CP group: sum their gradients
            for n, gsum in zip(names, flat.split([p.numel() for p in mod.parameters()])):
                errs["d" + n.split(".")[0]] = tolerance_excess(gsum.view_as(g_ref[n]), g_ref[n], rtol)
            rows.append(
                {
                    **{k: v for k, v in cfg.items() if k != "methods"},
                    "method": name,
                    "C": world,
                    "worst": max(errs.values()),
                    **errs,
                }
            )
    return rows


def comm_checks(rank: int, world: int) -> dict:
    """All-to-all round trip, float64 gradcheck of the autograd all-to-all, shard/gather round trip."""
    from ._comm import HeadToSeq, SeqToHead, gather_sequence, head_to_seq, seq_to_head

    g = torch.Generator().manual_seed(rank)
    x = torch.randn(2, 6, 2 * world, 4, generator=g, dtype=torch.float64)
    h = seq_to_head(x, None)
    out = {"head_shape": tuple(h.shape), "round_trip": float((head_to_seq(h, None) - x).abs().max())}
    # The all-to-all is linear, so its autograd backward is right iff it is the adjoint over the whole group:
    # sum_r <A x, y>_r == sum_r <x, A^T y>_r for random x, y (the distributed form of gradcheck's Jacobian test;
    # a per-rank gradcheck cannot see the columns that other ranks' inputs contribute).
    for name, fn, inp in (("seq_to_head", SeqToHead.apply, x), ("head_to_seq", HeadToSeq.apply, h)):
        xi = torch.randn(inp.shape, generator=g, dtype=torch.float64, requires_grad=True)
        y = fn(xi, None)
        w = torch.randn(y.shape, generator=g, dtype=torch.float64)
        (gx,) = torch.autograd.grad(y, xi, w)
        sums = torch.stack([(y.detach() * w).sum(), (xi.detach() * gx).sum()])
        if world > 1:
            dist.all_reduce(sums)
        out[f"adjoint_{name}"] = float((sums[0] - sums[1]).abs() / sums[0].abs().clamp_min(1e-12))
    full = torch.arange(2 * 4 * world * 3, dtype=torch.float64).view(2, 4 * world, 3)
    out["gather_shard"] = float((gather_sequence(shard_sequence(full)) - full).abs().max())
    # what the head all-to-all must compute: rank r holds heads [r*h/C, (r+1)*h/C) of the full sequence
    xs = [
        torch.randn(2, 6, 2 * world, 4, generator=torch.Generator().manual_seed(q), dtype=torch.float64)
        for q in range(world)
    ]
    expect = torch.cat(xs, dim=1)[:, :, 2 * rank : 2 * rank + 2].permute(0, 2, 1, 3)
    out["head_content"] = float((h - expect).abs().max())
    return out


def invalid_config_message(rank: int, world: int, heads: int, kv_heads: int) -> str:
    """Construct a UPipeAttention with an invalid head / world-size combination; return the error text."""
    try:
        UPipeAttention(32, heads, kv_heads, 8, None)
    except ValueError as e:
        return str(e)
    return ""


def raise_on_rank(rank: int, world: int, bad_rank: int) -> int:
    """Rank ``bad_rank`` raises; the others wait in a collective that can then never complete."""
    if rank == bad_rank:
        raise RuntimeError(f"deliberate failure on rank {rank}")
    t = torch.ones(1)
    dist.all_reduce(t)
    return int(t.item())


def length_mismatch_messages(rank: int, world: int) -> dict[str, str]:
    """Give rank 0 one token more than the others; return each method's error text (type name: message)."""
    from ._comm import SequenceLengthMismatchError

    out = {}
    for name, cls in (("upipe", UPipeAttention), ("ulysses", UlyssesAttention), ("ring", RingAttention)):
        mod = cls(32, 4, 2, 8, None)
        t = 9 if rank == 0 else 8
        try:
            mod(torch.randn(1, t, 32), torch.arange(rank * 8, rank * 8 + t))
        except SequenceLengthMismatchError as e:
            out[name] = f"{type(e).__name__}: {e}"
        else:
            out[name] = ""
    return out


def oom_on_rank(rank: int, world: int, bad_rank: int, poll_s: float = 0.2) -> int:
    """Rank ``bad_rank`` runs out of memory (a synthetic ``OutOfMemoryError``) inside a
    :class:`CollectiveOOMGuard`, survives it and never joins the collective its peers are waiting in; the
    guard must stop the peers (exit code ``OOM_EXIT_CODE``) instead of leaving them to the group's timeout."""
    import time

    from ._oom import CollectiveOOMGuard

    try:
        with CollectiveOOMGuard(poll_s=poll_s):
            if rank == bad_rank:
                raise torch.OutOfMemoryError("synthetic: tried to allocate 1.00 TiB")
            t = torch.ones(1)
            dist.all_reduce(t)  # waits for bad_rank, which never comes
    except torch.OutOfMemoryError:
        time.sleep(60)
    return rank


def broadcast_check(rank: int, world: int) -> dict:
    """Build the tiny Llama with a rank-dependent seed (as an unseeded launcher would), then broadcast rank 0's
    weights: report the change made and a checksum of the weights afterwards."""
    from .model import LlamaConfig, TinyLlama, broadcast_parameters

    torch.manual_seed(rank)
    cfg = LlamaConfig(vocab_size=64, n_layers=1, dim=16, n_heads=2, n_kv_heads=2, head_dim=8, ffn_dim=32)
    model = TinyLlama(cfg, "upipe", None)
    changed = broadcast_parameters(model)
    checksum = float(sum(p.double().sum() * (i + 1) for i, p in enumerate(model.parameters())))
    return {"changed": changed, "checksum": checksum}


def train_main_on_rank(rank: int, world: int, argv: list[str]) -> list[float]:
    """``icml26.upipe.train.main(argv)`` inside an already initialised process group."""
    from .train import main

    return main(argv)


def length_checks_counted(rank: int, world: int) -> int:
    """How many length checks four forwards run: three at one local shape, then one at another (expect 2)."""
    from . import attention

    calls = []
    original = attention.check_local_lengths

    def counting(x, group, name="x_local"):
        calls.append(tuple(x.shape[:2]))
        return original(x, group, name)

    attention.check_local_lengths = counting
    try:
        mod = UPipeAttention(32, 4, 2, 8, None)
        for t in (8, 8, 8, 16):
            mod(torch.randn(1, t, 32), torch.arange(rank * t, (rank + 1) * t))
    finally:
        attention.check_local_lengths = original
    return len(calls)


def hf_llama_on_rank(rank: int, world: int, cfg: dict, steps: int, seed: int) -> dict:
    """A ``transformers`` Llama with ``attn_implementation="upipe"`` on this rank's shard of the sequence: per
    step the global loss (token losses summed over ranks) and, after the first backward, every parameter's
    all-reduced gradient; ``steps`` AdamW steps."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    from .hf import register_hf_attention

    register_hf_attention()
    ids, labels = hf_batch(cfg, seed)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(LlamaConfig(**cfg["llama"]), attn_implementation="upipe")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    pos = torch.arange(ids.shape[1]).expand_as(ids)
    x, p, y = (shard_sequence(z, None, dim=1) for z in (ids, pos, labels))
    losses, grads = [], None
    for _ in range(steps):
        opt.zero_grad()
        logits = model(input_ids=x, position_ids=p, use_cache=False).logits
        total = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100, reduction="sum")
        loss = total / int((labels != -100).sum())
        loss.backward()
        for q in model.parameters():
            dist.all_reduce(q.grad)
        summed = loss.detach().clone()
        dist.all_reduce(summed)
        losses.append(float(summed))
        if grads is None:
            grads = {n: q.grad.detach().clone() for n, q in model.named_parameters()}
        opt.step()
    return {"losses": losses, "grads": grads}


def hf_batch(cfg: dict, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids ``[B, S]`` and next-token labels shifted on the whole sequence (the last position ignored)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, cfg["llama"]["vocab_size"], (cfg["B"], cfg["S"]), generator=g)
    labels = torch.cat([ids[:, 1:], torch.full((cfg["B"], 1), -100)], dim=1)
    return ids, labels


def compiled_vs_eager(rank: int, world: int, method: str, seed: int = 0) -> dict:
    """One forward + backward of ``method`` eager and under ``torch.compile(fullgraph=True)`` (any graph break
    raises) with inductor: the largest output and input-gradient differences and the frames Dynamo compiled."""
    import torch._dynamo as dynamo
    from torch._dynamo.testing import CompileCounterWithBackend

    torch.manual_seed(seed)
    attn = METHODS[method](64, 4, 2, 16, process_group=None)
    x = shard_sequence(torch.randn(2, 32, 64), None, 1).detach().requires_grad_(True)
    pos = shard_sequence(torch.arange(32), None, 0)
    y = attn(x, pos)
    y.pow(2).sum().backward()
    y_eager, g_eager = y.detach(), x.grad.clone()
    x.grad = None
    dynamo.reset()
    counter = CompileCounterWithBackend("inductor")
    y = torch.compile(attn, fullgraph=True, backend=counter)(x, pos)
    y.pow(2).sum().backward()
    return {
        "out": float((y.detach() - y_eager).abs().max()),
        "grad": float((x.grad - g_eager).abs().max()),
        "frames": int(counter.frame_count),
    }
