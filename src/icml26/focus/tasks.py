"""Procedural prompt -> answer tasks over a 32-token vocabulary: the EOS-padded mix (spec section 5) and the
content-only reset-XOR chain (issue 18's "wasteful" family).

Every example has a fixed-length prompt (``PROMPT_LEN``, left-padded with ``PAD``) and a fixed-length answer
(``ANSWER_LEN``, right-filled with ``EOS``), so a batch needs no attention padding.  Tasks:

* ``copy`` / ``reverse`` / ``sort``: a string of 4-8 digits;
* ``add``: two 4-digit numbers, digits least-significant first, answer = the 5-digit sum (carries chain
  neighbouring answer tokens);
* ``kv``: three (key, 2-digit value) records; the answer lists them sorted by key, each followed by a *free*
  random digit that nothing predicts (it keeps some confidences low and is not scored).

Content-only family (:func:`sample_xor_chain`, task ``xor``): the prompt is ``XOR_LEN`` symbols, each a pair
``(x_i, r_i)`` of a bit and a reset flag (``r_i ~ Bernoulli(reset_p)``, ``r_0 = 1``); the answer is ``XOR_LEN``
bits with ``y_i = x_i`` if ``r_i`` else ``y_{i-1} XOR x_i``.  Every answer token is content (no EOS fill), a
token is easy once a neighbour in its segment is known (``y_{i-1} = y_i XOR x_i`` too), and a segment's first
token is easy at once, so only a few of a block's masked tokens are decodable at each step.
:func:`sample_family` draws one family with prompts left-padded to a common length ``FAMILY_PROMPT_LEN``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "PAD",
    "MASK",
    "SEP",
    "EOS",
    "VOCAB_SIZE",
    "PROMPT_LEN",
    "ANSWER_LEN",
    "TASKS",
    "FAMILIES",
    "FAMILY_PROMPT_LEN",
    "XOR_LEN",
    "sample_tasks",
    "sample_xor_chain",
    "sample_family",
]

PAD, MASK, SEP, EOS = 0, 1, 2, 3
_TASK_TOKEN = {"copy": 4, "reverse": 5, "sort": 6, "add": 7, "kv": 8}
_DIGIT, _KEY = 10, 20  # digits 10..19, keys 20..27
VOCAB_SIZE = 32
PROMPT_LEN, ANSWER_LEN = 12, 32
TASKS = tuple(_TASK_TOKEN)
XOR_LEN = ANSWER_LEN  # content tokens of a reset-XOR chain answer
_XOR_TASK, _XOR_SYM = 9, 28  # prompt symbol of (x, r) is 28 + 2 * r + x; answer bits are digits 10 / 11
FAMILY_PROMPT_LEN = 1 + XOR_LEN  # task token + the symbols; EOS-padded prompts are left-padded to this
FAMILIES = ("xor", "eos", "xor+eos")


def _one(task: str, rng: np.random.Generator) -> tuple[list[int], list[int], list[bool]]:
    if task in ("copy", "reverse", "sort"):
        d = rng.integers(0, 10, size=int(rng.integers(4, 9))).tolist()
        body = d
        out = {"copy": d, "reverse": d[::-1], "sort": sorted(d)}[task]
        ans = [_DIGIT + x for x in out]
        scored = [True] * len(ans)
    elif task == "add":
        a, b = rng.integers(0, 10, size=4).tolist(), rng.integers(0, 10, size=4).tolist()
        body = a + b
        s = sum(x * 10**i for i, x in enumerate(a)) + sum(x * 10**i for i, x in enumerate(b))
        ans = [_DIGIT + (s // 10**i) % 10 for i in range(5)]
        scored = [True] * 5
    else:
        keys = rng.choice(8, size=3, replace=False).tolist()
        vals = rng.integers(0, 10, size=(3, 2)).tolist()
        body = [t for k, v in zip(keys, vals) for t in (_KEY - _DIGIT + k, v[0], v[1])]
        ans, scored = [], []
        for k, v in sorted(zip(keys, vals)):
            ans += [_KEY + k, _DIGIT + v[0], _DIGIT + v[1], _DIGIT + int(rng.integers(0, 10))]
            scored += [True, True, True, False]
    prompt = [_TASK_TOKEN[task]] + [_DIGIT + t for t in body] + [SEP]
    prompt = [PAD] * (PROMPT_LEN - len(prompt)) + prompt
    scored = scored + [True] * (ANSWER_LEN - len(ans))
    ans = ans + [EOS] * (ANSWER_LEN - len(ans))
    return prompt, ans, scored


def sample_tasks(rng: np.random.Generator, n: int, tasks: tuple[str, ...] = TASKS) -> dict[str, np.ndarray]:
    """``n`` examples, task drawn uniformly from ``tasks``.

    Returns ``prompt`` (n, PROMPT_LEN), ``answer`` (n, ANSWER_LEN), ``scored`` (n, ANSWER_LEN; False on free
    fields) and ``task`` (n,) indices into ``tasks``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    bad = [t for t in tasks if t not in _TASK_TOKEN]
    if not tasks or bad:
        raise ValueError(f"tasks must be a non-empty subset of {TASKS}, got {tasks!r}")
    which = rng.integers(0, len(tasks), size=n)
    rows = [_one(tasks[w], rng) for w in which]
    return {
        "prompt": np.array([r[0] for r in rows], dtype=np.int64),
        "answer": np.array([r[1] for r in rows], dtype=np.int64),
        "scored": np.array([r[2] for r in rows], dtype=bool),
        "task": which.astype(np.int64),
    }


def sample_xor_chain(
    rng: np.random.Generator, n: int, reset_p: float = 0.15, rule: str = "xor"
) -> dict[str, np.ndarray]:
    """``n`` reset chains (content-only answers of ``XOR_LEN`` bits).

    ``y_0 = x_0``; for ``i > 0``: ``y_i = x_i`` if ``r_i`` else ``y_{i-1} XOR x_i`` (``rule="xor"``) or
    ``y_{i-1}`` (``rule="hold"``: the bit of the last reset is held), with ``x_i ~ Bernoulli(1/2)`` and
    ``r_i ~ Bernoulli(reset_p)``.  Returns the keys of :func:`sample_tasks` (``task`` is all 0); the prompt is
    ``[task token, symbol_0, ..., symbol_{XOR_LEN-1}]`` (``FAMILY_PROMPT_LEN`` tokens).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not (isinstance(reset_p, (int, float)) and 0.0 <= reset_p <= 1.0):
        raise ValueError(f"reset_p must be a number in [0, 1], got {reset_p!r}")
    if rule not in ("xor", "hold"):
        raise ValueError(f"rule must be 'xor' or 'hold', got {rule!r}")
    x = rng.integers(0, 2, size=(n, XOR_LEN))
    r = (rng.random((n, XOR_LEN)) < reset_p).astype(np.int64)
    r[:, 0] = 1
    y = np.zeros_like(x)
    for i in range(XOR_LEN):
        y[:, i] = np.where(r[:, i] == 1, x[:, i], y[:, i - 1] ^ x[:, i] if rule == "xor" else y[:, i - 1])
    prompt = np.concatenate((np.full((n, 1), _XOR_TASK), _XOR_SYM + 2 * r + x), 1)
    return {
        "prompt": prompt.astype(np.int64),
        "answer": (_DIGIT + y).astype(np.int64),
        "scored": np.ones((n, XOR_LEN), dtype=bool),
        "task": np.zeros(n, dtype=np.int64),
    }


def sample_family(
    family: str,
    rng: np.random.Generator,
    n: int,
    reset_p: float = 0.15,
    xor_share: float = 0.75,
    prompt_len: int = FAMILY_PROMPT_LEN,
    rule: str = "xor",
    tasks: tuple[str, ...] = TASKS,
) -> dict[str, np.ndarray]:
    """``n`` examples of ``family``, prompts left-padded with ``PAD`` to ``prompt_len`` tokens (at least
    ``PROMPT_LEN`` for ``"eos"``, ``FAMILY_PROMPT_LEN`` otherwise); EOS-padded examples draw from ``tasks``.

    ``"xor"``: :func:`sample_xor_chain`; ``"eos"``: :func:`sample_tasks` (all five EOS-padded tasks);
    ``"xor+eos"``: each example is a chain with probability ``xor_share``, else an EOS-padded task (training
    mixture).  ``task`` indexes ``("xor",) + TASKS``.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    if not 0.0 <= xor_share <= 1.0:
        raise ValueError(f"xor_share must lie in [0, 1], got {xor_share!r}")
    need = PROMPT_LEN if family == "eos" else FAMILY_PROMPT_LEN
    if isinstance(prompt_len, bool) or not isinstance(prompt_len, int) or prompt_len < need:
        raise ValueError(f"prompt_len must be an integer >= {need} for family {family!r}, got {prompt_len!r}")
    if family != "xor+eos":
        d = sample_xor_chain(rng, n, reset_p, rule) if family == "xor" else sample_tasks(rng, n, tasks)
        pad = np.full((n, prompt_len - d["prompt"].shape[1]), PAD, dtype=np.int64)
        return {**d, "prompt": np.concatenate((pad, d["prompt"]), 1), "task": d["task"] + (family == "eos")}
    is_x = rng.random(n) < xor_share
    x, e = (sample_family(f, rng, n, reset_p, prompt_len=prompt_len, rule=rule, tasks=tasks) for f in ("xor", "eos"))
    return {k: np.where(is_x.reshape((n,) + (1,) * (x[k].ndim - 1)), x[k], e[k]) for k in x}
