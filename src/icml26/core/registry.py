"""The run registry: the static manifest of the papers, and each paper's reproduction, imported only to run it.

A paper's ``experiment.py`` registers ``Experiment(slug, presets, seeds, measure, judge)``:
``measure(config, seed, progress) -> dict`` is one independent replicate (data, initialisation and splits all
drawn from ``seed``; JSON-able) and ``judge(config, records, report)`` turns the per-seed records (in seed order)
into judged statements, tables and figures.  :func:`experiments` reads :mod:`icml26.manifest` without importing
any paper or torch; :func:`get` imports a paper's module on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, is_dataclass, replace
from typing import Any

from icml26.manifest import PAPERS, Entry

__all__ = ["Entry", "Experiment", "register", "get", "experiments", "unavailable", "PRESETS"]

PRESETS = ("quick", "full")


@dataclass(frozen=True)
class Experiment:
    """One paper's reproduction: ``presets`` (``{"quick": cfg, "full": cfg}``, frozen dataclasses), default ``seeds``
    per preset (a count ``n`` for seeds ``0..n-1``, or a tuple of seeds, e.g. fresh seeds disjoint from those the
    setting was tuned on), ``measure`` and ``judge`` (module docstring); ``title``/``paper``/``component`` come from
    the manifest when left empty; ``threads`` caps torch's and BLAS's threads in ``measure`` (tiny models run faster
    on one); ``timing_statements`` names the statements whose judged numbers are wall-clock measurements (speed ratios,
    throughput, arms trained for an equal wall-clock budget): ``icml26 verify`` gives their numbers a looser
    tolerance, since machine load moves them, but still demands the same verdict.  ``dev_seeds``: the seeds design and
    tuning used, disjoint from every preset's reported ``seeds``; ``tuning``: the ledger of every variant tried while
    designing, dicts with ``variant`` (what changed), ``seeds`` (the seeds it saw: an entry that saw reported seeds is
    a lapse, recorded honestly and flagged in report.md) and ``outcome`` (what it gave), written to result.json."""

    slug: str
    presets: Mapping[str, Any]
    seeds: Mapping[str, int | tuple[int, ...]]
    measure: Callable[..., dict]
    judge: Callable[..., None]
    title: str = ""
    paper: str = ""
    component: str = ""
    threads: int | None = None
    timing_statements: tuple[str, ...] = ()
    dev_seeds: tuple[int, ...] = ()
    tuning: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.slug):
            raise ValueError(f"slug must be a lowercase python identifier, got {self.slug!r}")
        for p in PRESETS:
            if p not in self.presets:
                raise ValueError(f"experiment {self.slug!r} must define preset {p!r}")
            if p not in self.seeds:
                raise ValueError(f"experiment {self.slug!r} must give seeds[{p!r}] (a count >= 1 or a tuple of seeds)")
            seeds = self.seeds[p]
            ok = (isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1) or (
                isinstance(seeds, tuple) and len(seeds) > 0 and len(set(seeds)) == len(seeds)
                and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in seeds)
            )  # fmt: skip
            if not ok:
                raise ValueError(
                    f"experiment {self.slug!r}: seeds[{p!r}] must be a count >= 1 or a non-empty tuple of distinct "
                    f"non-negative integers, got {seeds!r}"
                )
        dev, who = self.dev_seeds, f"experiment {self.slug!r}"
        if not isinstance(dev, tuple) or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in dev):
            raise ValueError(f"{who}: dev_seeds must be a tuple of non-negative integers, got {dev!r}")
        for p, s in ((p, self.seeds[p]) for p in PRESETS):
            if clash := sorted(set(dev) & set(range(s) if isinstance(s, int) else s)):
                raise ValueError(f"{who}: {p} seeds {clash} are also dev seeds (reported seeds are held out)")
        for t in self.tuning:
            if (not isinstance(t, Mapping) or {"variant", "seeds", "outcome"} - set(t)
                    or not isinstance(t["seeds"], (list, tuple)) or not all(isinstance(x, int) for x in t["seeds"])):
                raise ValueError(f"{who}: each tuning entry needs variant, seeds (a list) and outcome; got {t!r}")
        for name, cfg in self.presets.items():
            if not (is_dataclass(cfg) and not isinstance(cfg, type) and type(cfg).__dataclass_params__.frozen):  # type: ignore[attr-defined]
                raise TypeError(f"preset {name!r} of {self.slug!r} must be a frozen dataclass instance")
        if not callable(self.measure) or not callable(self.judge):
            raise TypeError("measure and judge must be callable")
        if self.threads is not None and (not isinstance(self.threads, int) or self.threads < 1):
            raise ValueError(f"threads must be None or an integer >= 1, got {self.threads!r}")
        if not isinstance(self.timing_statements, tuple) or not all(isinstance(t, str) for t in self.timing_statements):
            raise TypeError(f"timing_statements must be a tuple of statement ids, got {self.timing_statements!r}")


_REGISTRY: dict[str, Experiment] = {}


def _manifest() -> dict[str, Entry]:
    return {p["slug"]: Entry(**p) for p in PAPERS}


def register(exp: Experiment) -> Experiment:
    """Add an experiment (called once, at import of the paper's ``experiment.py``); fills title from the manifest."""
    if not isinstance(exp, Experiment):
        raise TypeError("register expects an Experiment")
    if (entry := _manifest().get(exp.slug)) is not None:
        exp = replace(exp, title=exp.title or entry.title, paper=exp.paper or entry.paper,
                      component=exp.component or entry.component)
    elif not exp.title:
        raise ValueError(f"experiment {exp.slug!r} is not in icml26.manifest, so it must give a title")
    if (old := _REGISTRY.get(exp.slug)) is not None and old.measure is not exp.measure:
        raise ValueError(f"slug {exp.slug!r} is registered twice")
    _REGISTRY[exp.slug] = exp
    return exp


def experiments() -> dict[str, Entry]:
    """Every known paper by slug, sorted: the manifest plus experiments registered in this process (no imports)."""
    out = _manifest()
    for slug, exp in _REGISTRY.items():
        out.setdefault(slug, Entry(slug=slug, title=exp.title, paper=exp.paper, component=exp.component))
    return dict(sorted(out.items()))


def unavailable() -> dict[str, str]:
    """Papers whose optional dependencies are not installed, with the reason (found without importing them)."""
    out = {}
    for slug, e in _manifest().items():
        if missing := [n for n in e.needs if importlib.util.find_spec(n) is None]:
            extra = f" (pip install 'icml26[{e.extra}]')" if e.extra else ""
            out[slug] = f"missing dependency {', '.join(map(repr, missing))}{extra}"
    return out


def get(slug: str) -> Experiment:
    """The experiment of ``slug``, importing its module on first use."""
    if slug in _REGISTRY:
        return _REGISTRY[slug]
    entries = experiments()
    if slug not in entries:
        raise KeyError(f"unknown slug {slug!r}; known slugs: {', '.join(entries) or '(none)'}")
    if why := unavailable().get(slug):
        raise KeyError(f"{slug!r} is unavailable: {why}")
    importlib.import_module(entries[slug].module)
    if slug not in _REGISTRY:
        raise KeyError(f"{entries[slug].module} did not register an experiment named {slug!r}")
    return _REGISTRY[slug]
