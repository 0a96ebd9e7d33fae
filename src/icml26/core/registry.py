"""The run registry: the one place that knows which papers exist.

A paper folder ``icml26/<slug>/`` registers its reproduction in ``experiment.py``::

    register(Experiment(slug="ski_rental", title=..., paper=..., presets={"quick": Config(...),
             "full": Config(...)}, seeds={"quick": 3, "full": 5}, run=run))

``run(config, seeds, progress) -> Report`` receives one preset (a frozen dataclass), the list of integer
seeds and a :class:`~icml26.core.progress.Progress`.  Experiments are discovered by importing every
``icml26.<pkg>.experiment`` module; a paper whose optional dependencies are missing is listed as
unavailable with the reason instead of breaking the others.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, is_dataclass
from typing import Any

from .report import Report

__all__ = ["Experiment", "register", "get", "experiments", "unavailable", "PRESETS"]

PRESETS = ("quick", "full")


@dataclass(frozen=True)
class Experiment:
    """One paper's reproduction.

    Attributes
    ----------
    slug: folder name of the paper (``icml26.<slug>``).
    title: the paper's title.
    paper: reference (authors, venue, arXiv id).
    presets: ``{"quick": cfg, "full": cfg}``, each a frozen dataclass instance.
    seeds: default number of seeds per preset.
    run: ``run(config, seeds, progress) -> Report``.
    component: one line naming what a user gets (shown by ``icml26 list``).
    threads: if set, the runner limits torch's intra-op threads and the BLAS pools to this many while ``run``
        executes, then restores them (tiny models run faster on one thread, and much faster on shared CPUs).
    """

    slug: str
    title: str
    paper: str
    presets: Mapping[str, Any]
    seeds: Mapping[str, int]
    run: Callable[..., Report]
    component: str = ""
    threads: int | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.slug):
            raise ValueError(f"slug must be a lowercase python identifier, got {self.slug!r}")
        for p in PRESETS:
            if p not in self.presets:
                raise ValueError(f"experiment {self.slug!r} must define preset {p!r}")
            if p not in self.seeds or int(self.seeds[p]) < 1:
                raise ValueError(f"experiment {self.slug!r} must give seeds[{p!r}] >= 1")
        for name, cfg in self.presets.items():
            if not (is_dataclass(cfg) and type(cfg).__dataclass_params__.frozen):
                raise TypeError(f"preset {name!r} of {self.slug!r} must be a frozen dataclass instance")
        if not callable(self.run):
            raise TypeError("run must be callable")
        if self.threads is not None and (not isinstance(self.threads, int) or self.threads < 1):
            raise ValueError(f"threads must be None or an integer >= 1, got {self.threads!r}")


_REGISTRY: dict[str, Experiment] = {}
_UNAVAILABLE: dict[str, str] = {}
_DISCOVERED = False


def register(exp: Experiment) -> Experiment:
    """Add an experiment (called once, at import of the paper's ``experiment.py``)."""
    if not isinstance(exp, Experiment):
        raise TypeError("register expects an Experiment")
    old = _REGISTRY.get(exp.slug)
    if old is not None and old.run is not exp.run:
        raise ValueError(f"slug {exp.slug!r} is registered twice")
    _REGISTRY[exp.slug] = exp
    return exp


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    import icml26

    for mod in pkgutil.iter_modules(icml26.__path__):
        if not mod.ispkg or mod.name == "core":
            continue
        try:
            importlib.import_module(f"icml26.{mod.name}.experiment")
        except ModuleNotFoundError as e:
            if e.name == f"icml26.{mod.name}.experiment":
                continue  # a package without a reproduction
            _UNAVAILABLE[mod.name] = f"missing dependency {e.name!r} (install the extra this paper needs)"
    _DISCOVERED = True


def experiments() -> dict[str, Experiment]:
    """All registered experiments, by slug, sorted."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def unavailable() -> dict[str, str]:
    """Papers whose experiment module could not be imported, with the reason."""
    _discover()
    return dict(_UNAVAILABLE)


def get(slug: str) -> Experiment:
    exps = experiments()
    if slug not in exps:
        known = ", ".join(exps) or "(none)"
        extra = f" ({_UNAVAILABLE[slug]})" if slug in _UNAVAILABLE else ""
        raise KeyError(f"unknown slug {slug!r}{extra}; known slugs: {known}")
    return exps[slug]
