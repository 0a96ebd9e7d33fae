"""Hugging Face ``generate`` with T3 (temper-then-tilt) unlearning as a logits processor.

Shows: the base model stays frozen; ``T3Unlearner.fit(retain, forget)`` trains a small classifier on the base
model's hidden states, and ``u.logits_processor()`` drops into ``model.generate(logits_processor=...)``.
Setting (no downloads): a tiny randomly initialised GPT-2 (2 layers, width 64) is first trained to memorise
20 "facts" (prompt token -> 3 answer tokens); facts 0-3 are the forget set, the rest the retain set. Greedy
generation then reproduces the memorised answers; with T3 the forget answers are suppressed while the retain
answers mostly survive.

Run:  python examples/hf_generate_t3.py        (needs the ``[lm]`` extra: transformers; ~10 s on one CPU thread)
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel, LogitsProcessorList
from transformers.utils import logging as hf_logging

from icml26.core import seed_everything, set_threads
from icml26.t3_unlearning import T3Unlearner

N_FACTS, N_FORGET, VOCAB = 20, 4, 48  # prompts use ids 0..19, answers ids 20..47


def make_facts() -> list[tuple[list[int], list[int]]]:
    g = torch.Generator().manual_seed(0)
    return [([i], (20 + torch.randint(0, VOCAB - 20, (3,), generator=g)).tolist()) for i in range(N_FACTS)]


def memorise(model: GPT2LMHeadModel, facts, steps: int = 300) -> None:
    """Train the base model on every fact (it must have seen the forget set for there to be something to unlearn)."""
    ids = torch.tensor([x + y for x, y in facts])
    labels = ids.clone()
    labels[:, 0] = -100  # loss on the answer tokens only
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(steps):
        opt.zero_grad()
        model(input_ids=ids, labels=labels).loss.backward()
        opt.step()
    model.eval()


def reproduced(model, facts, processors=None) -> int:
    """How many answers greedy generation reproduces exactly (one unpadded batch: all prompts have one token)."""
    prompts = torch.tensor([x for x, _ in facts])
    out = model.generate(
        prompts,
        attention_mask=torch.ones_like(prompts),
        max_new_tokens=3,
        do_sample=False,
        pad_token_id=0,
        logits_processor=processors,
    )
    return sum(out[i, 1:].tolist() == y for i, (_, y) in enumerate(facts))


def main() -> None:
    set_threads()
    seed_everything(0)
    hf_logging.set_verbosity_error()  # quiet transformers' config notices
    config = GPT2Config(vocab_size=VOCAB, n_positions=8, n_layer=2, n_head=2, n_embd=64, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)  # random initialisation from a config: nothing is fetched
    facts = make_facts()
    memorise(model, facts)
    forget, retain = facts[:N_FORGET], facts[N_FORGET:]

    u = T3Unlearner(model, temperature=2.0, guidance=4.0).fit(retain, forget, epochs=300)
    t3 = LogitsProcessorList([u.logits_processor()])
    print(f"T3 classifier: {u.n_trainable_params_} parameters (base model {model.num_parameters()})")
    print(
        f"base: forget reproduced {reproduced(model, forget)}/{len(forget)}, "
        f"retain reproduced {reproduced(model, retain)}/{len(retain)}"
    )
    print(
        f"T3:   forget reproduced {reproduced(model, forget, t3)}/{len(forget)}, "
        f"retain reproduced {reproduced(model, retain, t3)}/{len(retain)}"
    )


if __name__ == "__main__":
    main()
