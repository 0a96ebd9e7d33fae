"""Procedural prompt -> answer tasks (spec section 5) over a 32-token vocabulary.

Every example has a fixed-length prompt (``PROMPT_LEN``, left-padded with ``PAD``) and a fixed-length answer
(``ANSWER_LEN``, right-filled with ``EOS``), so a batch needs no attention padding.  Tasks:

* ``copy`` / ``reverse`` / ``sort``: a string of 4-8 digits;
* ``add``: two 4-digit numbers, digits least-significant first, answer = the 5-digit sum (carries chain
  neighbouring answer tokens);
* ``kv``: three (key, 2-digit value) records; the answer lists them sorted by key, each followed by a *free*
  random digit that nothing predicts (it keeps some confidences low and is not scored).
"""

from __future__ import annotations

import numpy as np

__all__ = ["PAD", "MASK", "SEP", "EOS", "VOCAB_SIZE", "PROMPT_LEN", "ANSWER_LEN", "TASKS", "sample_tasks"]

PAD, MASK, SEP, EOS = 0, 1, 2, 3
_TASK_TOKEN = {"copy": 4, "reverse": 5, "sort": 6, "add": 7, "kv": 8}
_DIGIT, _KEY = 10, 20  # digits 10..19, keys 20..27
VOCAB_SIZE = 32
PROMPT_LEN, ANSWER_LEN = 12, 32
TASKS = tuple(_TASK_TOKEN)


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
