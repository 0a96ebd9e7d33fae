"""Run one experiment: ``measure`` per seed (in-process, local processes or submitit), then ``judge``.

Each seed's record is stored once measured, at ``OUT/SLUG/.records/<preset>-<config hash>-<code hash>/seed<N>.json``
(code hash: the paper's folder, ``core`` and ``common``), so an interrupted run resumes without recomputing
finished seeds and an edit of the code invalidates stale records (``fresh=True`` recomputes regardless).
Executors: ``"local"`` (this process, or ``jobs`` spawned processes), ``"slurm"`` (one SLURM job per seed through
submitit) and ``"submitit-local"`` (the same path on submitit's local executor, how it is tested).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from icml26.progress import Progress

from .io import atomic_write_text, provenance, to_jsonable, versions, write_run
from .registry import PRESETS, Experiment, get
from .report import Report, counts
from .seeding import default_threads, seed_everything

__all__ = ["run_experiment", "judge_records", "resolve_seeds", "limited_threads", "code_hash", "EXECUTORS"]

EXECUTORS = ("local", "slurm", "submitit-local")


@contextmanager
def limited_threads(n: int | None) -> Iterator[None]:
    """Limit torch's intra-op threads and the BLAS/OpenMP pools to ``n`` inside the block (``None``: no change), with
    torch's deterministic algorithms on (a warning, not an error, for an op that has none)."""
    if n is None:
        yield
        return
    import torch
    from threadpoolctl import threadpool_limits
    before, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(n)
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with threadpool_limits(n):
            yield
    finally:
        torch.set_num_threads(before)
        torch.use_deterministic_algorithms(det)


def resolve_seeds(n: int | list[int] | None, default: int | tuple[int, ...] | list[int]) -> list[int]:
    """A count ``n`` means seeds ``0..n-1``; a list is taken as it is (distinct non-negative integers); ``None``
    means ``default`` (the experiment's seeds for the preset: a count or a tuple)."""
    n = (list(default) if isinstance(default, tuple) else default) if n is None else n
    if isinstance(n, (list, tuple)):
        if not n or len(set(n)) != len(n) or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in n):
            raise ValueError(f"seeds must be distinct non-negative integers, got {n!r}")
        return list(n)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"seeds must be an integer >= 1 or a list of seeds, got {n!r}")
    return list(range(n))


def code_hash(exp: Experiment) -> str:
    """Hash of every ``.py`` file in the paper's folder (``icml26/<slug>/``, else the folder of ``measure``'s
    module), in ``icml26.core`` and in ``icml26.common``."""
    here = Path(__file__).resolve().parent
    paper = here.parent / exp.slug
    if not paper.is_dir():
        paper = Path(inspect.getfile(exp.measure)).resolve().parent
    h = hashlib.sha256()
    for folder in sorted({paper, here, here.parent / "common"}):
        for f in sorted(folder.rglob("*.py")) if folder.is_dir() else []:
            h.update(str(f.relative_to(folder.parent)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def _measure_task(exp: Experiment, config: Any, seed: int, record_path: str, artifact_dir: str, threads: int | None,
                  show: bool, chash: str) -> dict:
    """Measure one seed and store its record atomically; returns the stored envelope (bound with ``partial``: a
    picklable task for worker processes and submitit jobs)."""
    path = Path(record_path)
    parts = path.with_name(path.stem + ".parts")
    progress = Progress(cache_dir=parts, show=show, artifact_dir=artifact_dir, code_hash=chash)
    t0 = time.perf_counter()
    with limited_threads(threads):
        seed_everything(seed)
        record = exp.measure(config, seed, progress)
    if not isinstance(record, Mapping):
        raise TypeError(f"measure of {exp.slug!r} must return a dict, got {type(record).__name__}")
    env = {"seed": seed, "wall_s": time.perf_counter() - t0, "pieces_resumed": progress.n_cached,
           "pid": os.getpid(), "record": to_jsonable(record)}
    atomic_write_text(path, json.dumps(env))
    shutil.rmtree(parts, ignore_errors=True)
    return env


def _run_tasks(tasks: list[partial], jobs: int, executor: str, slurm: Mapping[str, Any], folder: Path, progress):
    if not tasks:
        return []
    if executor == "local" and jobs == 1:
        return [t() for t in progress.track(tasks, total=len(tasks), description="seeds")]
    if executor == "local":
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
            futures = [pool.submit(t) for t in tasks]
            return [f.result() for f in progress.track(futures, total=len(futures), description="seeds")]
    try:
        import submitit
    except ImportError as e:  # pragma: no cover - depends on the extra
        raise RuntimeError("executor 'slurm' needs submitit: pip install 'icml26[slurm]'") from e
    folder.mkdir(parents=True, exist_ok=True)
    params = {"timeout_min": int(slurm.get("time_min", 60))}
    ex: submitit.Executor
    if executor == "submitit-local":
        ex = submitit.LocalExecutor(folder=str(folder))
    else:
        ex = submitit.AutoExecutor(folder=str(folder), cluster="slurm")
        params.update(cpus_per_task=int(slurm.get("cpus", 2)),
                      **({"slurm_partition": slurm["partition"]} if slurm.get("partition") else {}),
                      **({"slurm_array_parallelism": jobs} if jobs > 1 else {}))
    ex.update_parameters(**params)
    handles = [ex.submit(t) for t in tasks]
    return [h.result() for h in progress.track(handles, total=len(handles), description="seeds")]


def judge_records(exp: Experiment | str, config: Any, records: list[dict], seeds: list[int] | None = None) -> Report:
    """Judge per-seed ``records`` (e.g. a result.json's, or mutated ones in a test) into a resolved :class:`Report`."""
    exp = get(exp) if isinstance(exp, str) else exp
    reported = {s for p in PRESETS for s in resolve_seeds(None, exp.seeds[p])}  # a ledger entry that saw one: flagged
    report = Report(seeds=list(seeds) if seeds is not None else list(range(len(records))),
                    ledger=[{**t, "saw reported seeds": sorted(set(t["seeds"]) & reported) or "no"}
                            for t in exp.tuning])
    exp.judge(config, records, report)
    report.resolve(timing=exp.timing_statements)
    return report


def run_experiment(slug: str, preset: str = "quick", seeds: int | list[int] | None = None, out: str | Path = "runs",
                   show_progress: bool = False, overrides: dict | None = None, jobs: int = 1, executor: str = "local",
                   slurm: Mapping[str, Any] | None = None, fresh: bool = False, rejudge: bool = False,
                   dev: bool = False) -> Path:
    """Measure ``slug``'s seeds (reusing stored records; ``jobs`` in parallel), judge them, write the run folder.
    result.json holds the config, the per-seed records, the judged statements with their kinds, tuning budgets,
    versions, provenance and wall times.  Returns the run folder.  ``rejudge=True`` re-judges the newest complete set of
    stored records of this preset and config even if the code changed since (recorded as ``records_code_hash``): for an
    edit of ``judge`` or of the report alone, without measuring again.  Seeds in ``Experiment.dev_seeds`` are refused
    unless ``dev=True`` (a design run on the tuning seeds, labelled so; its default seeds are the dev seeds)."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    exp = get(slug)
    config = replace(exp.presets[preset], **overrides) if overrides else exp.presets[preset]
    if dev and not exp.dev_seeds and seeds is None:
        raise ValueError(f"dev: {slug} declares no dev_seeds; pass seeds")
    seed_list = resolve_seeds(seeds, tuple(exp.dev_seeds) if dev else exp.seeds[preset])
    if not dev and (clash := sorted(set(seed_list) & set(exp.dev_seeds))):
        raise ValueError(f"seeds {clash} are dev seeds of {slug} (used for tuning): a reported run needs held-out "
                         "seeds; pass dev=True (--dev) for a design run")
    cfg_key = hashlib.sha256(json.dumps(to_jsonable(config), sort_keys=True).encode()).hexdigest()[:12]
    chash = code_hash(exp)
    slug_dir = Path(out) / slug
    rec_dir = slug_dir / ".records" / f"{preset}-{cfg_key}-{chash}"
    if rejudge:
        done = [d for d in (slug_dir / ".records").glob(f"{preset}-{cfg_key}-*")
                if all((d / f"seed{s}.json").exists() for s in seed_list)]
        if not done:
            raise FileNotFoundError(f"rejudge: no complete stored records of {slug} {preset} for seeds {seed_list}")
        rec_dir = max(done, key=lambda d: d.stat().st_mtime)
    rec_hash = rec_dir.name.rsplit("-", 1)[1]
    progress = Progress(show=show_progress)
    prov = provenance()  # before any work: the load at start
    t0 = time.perf_counter()
    envelopes: dict[int, dict] = {}
    todo = []
    in_process = jobs == 1 and executor == "local"
    threads = exp.threads if exp.threads is not None else (None if in_process else max(1, default_threads() // jobs))
    for s in seed_list:
        path = rec_dir / f"seed{s}.json"
        if path.exists() and not fresh:
            envelopes[s] = {**json.loads(path.read_text()), "from_cache": True}
        else:
            todo.append(partial(_measure_task, exp, config, s, str(path), str(slug_dir / ".artifacts"), threads,
                                show_progress and in_process, chash))
    for env in _run_tasks(todo, jobs, executor, slurm or {}, slug_dir / ".submitit", progress):
        envelopes[env["seed"]] = {**env, "from_cache": False}
    measured = time.perf_counter() - t0
    records = [envelopes[s]["record"] for s in seed_list]
    report = judge_records(exp, config, records, seed_list)
    wall = time.perf_counter() - t0
    n_cached = sum(e["from_cache"] for e in envelopes.values())
    per_seed = {str(s): round(envelopes[s]["wall_s"], 3) for s in seed_list}
    claims = [c.to_dict() for c in report.claims]
    result = {
        "slug": slug, "title": exp.title, "paper": exp.paper, "preset": preset, "config": config, "seeds": seed_list,
        "dev_seeds": list(exp.dev_seeds), "dev_run": dev, "claims": claims, "counts": counts(claims),
        "tuning": report.ledger, "budgets": report.tuning, "records": records,
        "metrics": report.metrics, "tables": {t.name: t.rows for t in report.tables},
        "figures": [f.filename for f in report.figures], "notes": report.notes, "versions": versions(),
        "provenance": prov, "code_hash": chash, "records_code_hash": rec_hash, "executor": executor, "jobs": jobs,
        "measure_threads": threads,
        "wall_time_s": wall, "measure_s_per_seed": per_seed,
        "compute_time_s": float(sum(e["wall_s"] for e in envelopes.values())), "seeds_from_cache": n_cached,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    header = {
        "paper": exp.paper, "seeds": ", ".join(map(str, seed_list)) + (" (DEV seeds: a design run, not a reported "
                                                                          "verdict)" if dev else ""),
        "dev seeds (tuning only)": ", ".join(map(str, exp.dev_seeds)) or "none declared",
        "preset": preset if preset == "full" else f"{preset} (smoke run, not the paper's verdict)",
        "wall time": f"{wall:.1f} s (measure {measured:.1f} s, {jobs} job(s), {executor})"
        + (f"; {n_cached} of {len(seed_list)} seeds from stored records" if n_cached else "")
        + (f" measured by code {rec_hash} (re-judged)" if rejudge else ""),
        "compute per seed (s)": ", ".join(f"{k}: {v:.1f}" for k, v in per_seed.items()),
        "date (UTC)": result["created_utc"], "code hash": chash,
        "machine": f"{prov['cpu']}, {prov['cores']} cores, {prov['torch_threads']} torch threads, load at start "
        f"{prov['load_avg_1m'] or 0:.2f}, commit {prov['git_commit']}"
        + (" (uncommitted changes)" if prov["git_dirty"] else ""),
        "versions": ", ".join(f"{k} {v}" for k, v in result["versions"].items()),
    }
    return write_run(out, result, report.to_markdown(exp.title, header), {f.filename: f.png for f in report.figures})
