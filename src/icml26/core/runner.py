"""Run one registered experiment end to end: seeds, timing, progress cache, and the run folder."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from .io import latest_run, load_result, to_jsonable, versions, write_run
from .progress import Progress
from .registry import PRESETS, get

__all__ = ["run_experiment", "resolve_seeds", "limited_threads"]


@contextmanager
def limited_threads(n: int | None) -> Iterator[None]:
    """Limit torch's intra-op threads and the BLAS/OpenMP pools to ``n`` inside the block (``None``: no change)."""
    if n is None:
        yield
        return
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        with threadpool_limits(n):
            yield
    finally:
        torch.set_num_threads(before)


def resolve_seeds(n: int | None, default: int) -> list[int]:
    if n is None:
        n = default
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"seeds must be an integer >= 1, got {n!r}")
    return list(range(n))


def run_experiment(
    slug: str,
    preset: str = "quick",
    seeds: int | None = None,
    out: str | Path = "runs",
    show_progress: bool = False,
    overrides: dict | None = None,
) -> Path:
    """Run ``slug`` with ``preset`` over ``seeds`` seeds (default: the experiment's) and write its run folder.

    Finished pieces of work are cached under ``out/<slug>/.cache/<preset>-<hash>/`` so an interrupted run
    resumes; the cache is removed once the run folder is written.  ``out/<slug>/.artifacts/`` is kept across
    runs (``progress.artifact_dir``) for trained checkpoints.  Returns the run folder.
    """
    exp = get(slug)
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    config = exp.presets[preset]
    if overrides:
        config = replace(config, **overrides)
    seed_list = resolve_seeds(seeds, int(exp.seeds[preset]))
    cfg_json = json.dumps(to_jsonable(config), sort_keys=True)
    key = hashlib.sha256(f"{cfg_json}|{seed_list}".encode()).hexdigest()[:12]
    cache_dir = Path(out) / slug / ".cache" / f"{preset}-{key}"
    progress = Progress(cache_dir=cache_dir, show=show_progress, artifact_dir=Path(out) / slug / ".artifacts")

    t0 = time.perf_counter()
    with limited_threads(exp.threads):
        report = exp.run(config, seed_list, progress)
    wall = time.perf_counter() - t0

    result = {
        "slug": slug,
        "title": exp.title,
        "paper": exp.paper,
        "preset": preset,
        "config": config,
        "seeds": seed_list,
        "claims": [c.to_dict() for c in report.claims],
        "metrics": report.metrics,
        "tables": {t.name: t.rows for t in report.tables},
        "figures": [f.filename for f in report.figures],
        "notes": report.notes,
        "versions": versions(),
        "wall_time_s": wall,
        "resumed_pieces": progress.n_cached,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    header = {
        "paper": exp.paper,
        "preset": preset,
        "seeds": ", ".join(map(str, seed_list)),
        "wall time": f"{wall:.1f} s" + (f" ({progress.n_cached} pieces resumed)" if progress.n_cached else ""),
        "date (UTC)": result["created_utc"],
        "versions": ", ".join(f"{k} {v}" for k, v in result["versions"].items()),
    }
    md = report.to_markdown(exp.title, header)
    run_dir = write_run(out, result, md, {f.filename: f.png for f in report.figures})
    shutil.rmtree(cache_dir, ignore_errors=True)
    with contextlib.suppress(OSError):  # the .cache folder itself, once no other preset's cache is in it
        cache_dir.parent.rmdir()
    return run_dir


def latest_results(out: str | Path) -> dict[str, dict]:
    """The latest result of every registered slug that has one under ``out``."""
    from .registry import experiments

    found = {}
    for slug in experiments():
        d = latest_run(out, slug)
        if d is not None:
            found[slug] = {"dir": d, **load_result(d)}
    return found
