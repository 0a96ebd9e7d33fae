"""Atomic writing and the run-directory layout.

A run writes ``OUT/SLUG/<UTC timestamp>/`` with ``result.json``, ``report.md`` and one PNG per figure.  The
folder is first filled under a hidden temporary name and then renamed in one step, and every file inside is
itself written to a temporary file and renamed; so an interrupted run never leaves a half-written result,
and the previous run's folder is never touched.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["atomic_write_bytes", "atomic_write_text", "to_jsonable", "versions", "provenance", "write_run",
           "latest_run", "load_result", "RESULT_FIELDS"]

#: Fields every ``result.json`` carries (other tools read them).
RESULT_FIELDS = ("slug", "title", "paper", "preset", "config", "seeds", "claims", "metrics", "versions",
    "wall_time_s", "created_utc")


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def to_jsonable(x: Any) -> Any:
    """Convert dataclasses, numpy arrays/scalars, tuples and paths to plain JSON types (NaN/inf -> None)."""
    if is_dataclass(x) and not isinstance(x, type):
        return to_jsonable(asdict(x))
    if isinstance(x, Mapping):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return to_jsonable(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, Path):
        return str(x)
    if x is None or isinstance(x, str):
        return x
    if hasattr(x, "to_dict"):
        return to_jsonable(x.to_dict())
    raise TypeError(f"cannot write a {type(x).__name__} to JSON: {x!r}")


_DEPENDENCIES = ("torch", "scipy", "sklearn", "opacus", "ot", "transformers", "flwr", "gymnasium", "lingam",
                 "matplotlib", "submitit")


def versions() -> dict[str, str]:
    """Versions of python, this package, numpy and every dependency the run imported (recorded in every result)."""
    from icml26 import __version__
    deps = {n: str(getattr(sys.modules[n], "__version__", "unknown")) for n in _DEPENDENCIES if n in sys.modules}
    return {"python": platform.python_version(), "package": __version__, "numpy": np.__version__, **deps,
            "platform": platform.platform()}


def provenance() -> dict[str, Any]:
    """Where a run ran: git commit (or the package version outside a checkout), CPU, cores, threads, load."""
    import subprocess
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--", ".."], capture_output=True,
                                    text=True, timeout=5).stdout.strip())  # the whole package, not core/ alone
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "", False
    cpu = platform.processor()
    with contextlib.suppress(OSError):
        cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), cpu)
    threads = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else None
    return {"git_commit": commit or None, "git_dirty": dirty, "cpu": cpu, "cores": os.cpu_count(),
            "torch_threads": threads, "load_avg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}


def write_run(out: str | Path, result: Mapping[str, Any], report_md: str, figures: Mapping[str, bytes]) -> Path:
    """Write one run under ``out/<slug>/<UTC timestamp>/`` atomically and return that folder.  ``result`` must hold
    every field in :data:`RESULT_FIELDS`; ``figures`` maps file names to PNG bytes."""
    if missing := [f for f in RESULT_FIELDS if f not in result]:
        raise ValueError(f"result is missing required fields {missing}")
    slug_dir = Path(out) / str(result["slug"])
    slug_dir.mkdir(parents=True, exist_ok=True)
    payload = json.dumps(to_jsonable(result), indent=2, sort_keys=False)
    tmp_dir = Path(tempfile.mkdtemp(prefix=".incomplete-", dir=slug_dir))
    try:
        for name, png in figures.items():
            atomic_write_bytes(tmp_dir / name, png)
        atomic_write_text(tmp_dir / "report.md", report_md)
        atomic_write_text(tmp_dir / "result.json", payload)
        for f in tmp_dir.iterdir():  # run files are for reading by everyone (mkstemp makes them 0600)
            f.chmod(0o644)
        tmp_dir.chmod(0o755)
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        final, k = slug_dir / stamp, 1
        while final.exists():
            final, k = slug_dir / f"{stamp}-{k}", k + 1
        os.rename(tmp_dir, final)
    except BaseException:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        raise
    return final


def latest_run(out: str | Path, slug: str) -> Path | None:
    """The newest complete run folder of ``slug`` under ``out`` (one holding a result.json), or None."""
    d = Path(out) / slug
    runs = sorted(p for p in (d.iterdir() if d.is_dir() else ()) if not p.name.startswith(".")
                  and (p / "result.json").exists())
    return runs[-1] if runs else None


def load_result(run_dir: str | Path) -> dict:
    return json.loads((Path(run_dir) / "result.json").read_text())
