"""The small, paper-agnostic core: registry, reports and claims, statistics, seeding and atomic run folders.

Nothing here knows about any paper.  A paper folder uses:

* :class:`Experiment` / :func:`register` to declare its reproduction;
* :class:`Report` and the ``judge_*`` helpers to turn measured numbers into claims with verdicts;
* :func:`mean_ci`, :func:`paired_wilcoxon`, :func:`paired_bootstrap` for statistics over seeds;
* :func:`seed_everything` at the start of every seed;
* ``progress.track`` / ``progress.cached`` (a :class:`Progress`) for progress bars and resumable runs.
"""

from .io import atomic_write_bytes, atomic_write_text, latest_run, load_result, to_jsonable, write_run
from .progress import Progress
from .registry import Experiment, experiments, get, register, unavailable
from .report import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    VERDICTS,
    Claim,
    Figure,
    Report,
    Table,
    judge_every,
    judge_k_of_n,
    judge_non_inferiority,
    judge_superiority,
    judge_threshold,
)
from .runner import run_experiment
from .seeding import seed_everything, set_threads
from .stats import Estimate, mean_ci, paired_bootstrap, paired_wilcoxon

__all__ = [
    "Experiment",
    "register",
    "get",
    "experiments",
    "unavailable",
    "run_experiment",
    "Report",
    "Claim",
    "Table",
    "Figure",
    "HOLDS",
    "DOES_NOT_HOLD",
    "INCONCLUSIVE",
    "VERDICTS",
    "judge_superiority",
    "judge_non_inferiority",
    "judge_threshold",
    "judge_every",
    "judge_k_of_n",
    "Estimate",
    "mean_ci",
    "paired_wilcoxon",
    "paired_bootstrap",
    "seed_everything",
    "set_threads",
    "Progress",
    "atomic_write_bytes",
    "atomic_write_text",
    "to_jsonable",
    "write_run",
    "latest_run",
    "load_result",
]
