"""The ``progress`` object every experiment's ``measure(config, seed, progress)`` receives (re-exported as
``icml26.core.Progress``; it lives outside the core because it is a run's helper, not part of the evidence machinery).

It does two things a long run needs: show progress (a rich bar on a terminal, nothing in tests) and
remember finished work, so a run that is interrupted resumes where it stopped.  ``cached(key, compute)``
returns the stored JSON result for ``key`` if an earlier attempt of the same run (same slug, preset and
config) finished it, and otherwise computes it and stores it atomically.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from icml26.core.io import atomic_write_bytes, atomic_write_text, to_jsonable
from icml26.core.seeding import seed_everything

__all__ = ["Progress"]

T = TypeVar("T")


class Progress:
    """Progress display plus a resume cache.  ``cache_dir``: finished pieces of work, one JSON file per key (``None``:
    in memory only); ``show``: draw a rich progress bar on stderr; ``artifact_dir``: expensive artifacts valid across
    runs and seeds (trained checkpoints, keyed by a hash of their config), never cleared by the runner; ``code_hash``:
    the hash of the paper's code, for artifacts that must be rebuilt when the code changes (put it in their config)."""

    def __init__(
        self,
        cache_dir: str | Path | None = None,
        show: bool = False,
        artifact_dir: str | Path | None = None,
        code_hash: str = "",
    ) -> None:
        self.code_hash = code_hash
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.artifact_dir = Path(artifact_dir) if artifact_dir is not None else None
        self.show = show
        self._memory: dict[str, Any] = {}
        self.n_cached = 0

    def track(self, iterable: Iterable[T], total: int | None = None, description: str = "") -> Iterator[T]:
        """Iterate over ``iterable``, advancing a progress bar if ``show``."""
        if not self.show:
            yield from iterable
            return
        if not sys.stderr.isatty():  # a log file or CI: one plain line per finished item, with elapsed and ETA
            t0 = last = time.perf_counter()
            n = total if total is not None else (len(iterable) if isinstance(iterable, Sized) else None)
            for i, x in enumerate(iterable, 1):
                yield x
                now = time.perf_counter()
                if i == n or i == 1 or now - last >= 15:  # at most one line per 15 s, plus the first and last
                    last, el = now, now - t0
                    eta = f", ETA {el / i * (n - i):.0f} s" if n else ""
                    print(f"{description}: {i}/{n or '?'} done, {el:.0f} s elapsed{eta}", file=sys.stderr, flush=True)
            return
        from rich.progress import track

        yield from track(iterable, total=total, description=description, transient=True)

    def log(self, message: str) -> None:
        if self.show:
            from rich.console import Console

            Console(stderr=True, log_path=False).log(message)

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        """Return the stored result for ``key``, or ``compute()`` it and store it (JSON, written atomically).  The value
        comes back as it was stored in JSON (tuples become lists, numpy scalars become floats), so ``compute`` should
        return plain JSON-able data: dicts of floats and lists."""
        if key in self._memory:
            return self._memory[key]
        path = None if self.cache_dir is None else self.cache_dir / f"{_file_name(key, 'key')}.json"
        if path is not None and path.exists():
            value = json.loads(path.read_text())
            self.n_cached += 1
        else:
            text = json.dumps(to_jsonable(compute()))
            value = json.loads(text)  # the same types a resumed run would read back
            if path is not None:
                atomic_write_text(path, text)
        self._memory[key] = value
        return value

    def checkpoint(self, name: str, config: Mapping[str, Any], build: Callable[[], dict]) -> dict:
        """A trained artifact kept across runs: ``artifact_dir / f"{name}-{hash(config)}.pt"``.  If that file exists its
        payload is loaded (``torch.load``, tensors and plain data only); otherwise ``build()`` is called and its payload
        (a dict of tensors, numbers, strings and dicts of those, e.g. ``{"model": model.state_dict(), "secs": s}``) is
        stored atomically before being returned.  ``config`` should hold everything that changes the artifact.
        ``build()`` runs with the global RNGs seeded from the config's hash and restored afterwards, so the artifact
        does not depend on which seed built it and a seed's numbers do not depend on whether it built or loaded it.
        With no ``artifact_dir``, ``build()`` runs every time (under the same RNG rule)."""
        _file_name(name, "name")
        import torch

        key = hashlib.sha256(json.dumps(to_jsonable(dict(config)), sort_keys=True).encode()).hexdigest()[:16]
        if self.artifact_dir is None:
            with _own_rng(int(key[:8], 16)):
                return build()
        path = self.artifact_dir / f"{name}-{key}-t{torch.get_num_threads()}.pt"  # never reused across thread counts
        with _file_lock(path.with_name(path.name + ".lock")):  # parallel seeds build it once, the rest wait
            if path.exists():
                return torch.load(path, map_location="cpu", weights_only=True)
            with _own_rng(int(key[:8], 16)):  # the same artifact whichever seed builds it; the seed's RNG untouched
                payload = build()
            buf = io.BytesIO()
            torch.save(payload, buf)
            atomic_write_bytes(path, buf.getvalue())
            return payload


def _file_name(s: str, what: str) -> str:
    if not s or any(c in s for c in "/\\") or s.startswith("."):
        raise ValueError(f"{what} must be a non-empty file-name-safe string, got {s!r}")
    return s


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (created if needed), held for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def _own_rng(seed: int) -> Iterator[None]:
    """Seed python's, numpy's and torch's global RNGs for the block, then put their previous states back."""
    import torch

    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    seed_everything(seed)
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])
