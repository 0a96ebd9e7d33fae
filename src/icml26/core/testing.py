"""Mutants for tests: every check must be able to fail (evidence contract v3).  ``with mutant("icml26.x.mod.func",
broken):`` replaces a function for the block, in its module and in every loaded ``icml26`` module that imported it by
name, then puts the original back; the test asserts that the check guarding that function no longer holds."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["mutant"]


@contextmanager
def mutant(target: str, replacement: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    """Replace the attribute at the dotted path ``target`` (``"pkg.module.name"`` or ``"pkg.module.Class.method"``) by
    ``replacement`` for the block; yields the original (a mutant may wrap it: drop a term, scale it, skip a step)."""
    parts, owner, path = target.split("."), None, []
    for i in range(len(parts) - 1, 0, -1):  # the longest importable module prefix
        try:
            owner, path = importlib.import_module(".".join(parts[:i])), parts[i:]
            break
        except ImportError:
            continue
    for name in path[:-1]:
        owner = getattr(owner, name, None)
    if owner is None or not path or not hasattr(owner, path[-1]):
        raise ValueError(f"target must be a dotted path to a function of an importable module, got {target!r}")
    original = getattr(owner, path[-1])
    patched = [(owner, path[-1])] + [(m, n) for m in list(sys.modules.values()) if len(path) == 1 and m is not owner
                                     and getattr(m, "__name__", "").startswith("icml26")
                                     for n, v in list(vars(m).items()) if v is original]
    for obj, name in patched:
        setattr(obj, name, replacement)
    try:
        yield original
    finally:
        for obj, name in patched:
            setattr(obj, name, original)
