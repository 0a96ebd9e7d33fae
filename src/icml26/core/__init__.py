"""The small, paper-agnostic core: registry, reports and judged statements, statistics, seeding, the runner.

Nothing here knows about any paper, and nothing here imports torch at import time.  A paper folder uses:

* :class:`Experiment` / :func:`register` to declare its reproduction as ``measure(config, seed, progress)``
  (one independent replicate per seed) and ``judge(config, records, report)``;
* :class:`Report` and the ``judge_*`` helpers (:mod:`.judges`) to turn per-seed numbers into statements of a kind
  (``"claim"``, ``"check"``, ``"precondition"``) with verdicts;
* :func:`mean_ci`, :func:`paired_wilcoxon`, :func:`paired_bootstrap` for statistics over seeds;
* ``progress.track`` / ``progress.cached`` / ``progress.checkpoint`` (a :class:`Progress`) inside ``measure``.
"""

from .io import atomic_write_bytes, atomic_write_text, latest_run, load_result, to_jsonable, write_run
from .judges import judge_every, judge_k_of_n, judge_non_inferiority, judge_superiority, judge_threshold
from .progress import Progress
from .registry import Entry, Experiment, experiments, get, register, unavailable
from .report import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    KINDS,
    VERDICTS,
    Claim,
    Figure,
    Report,
    Table,
    counts,
    summary_line,
)
from .runner import EXECUTORS, run_experiment
from .seeding import seed_everything, set_threads
from .stats import Estimate, mean_ci, paired_bootstrap, paired_wilcoxon

__all__ = [
    "Entry", "Experiment", "register", "get", "experiments", "unavailable", "run_experiment", "EXECUTORS",
    "Report", "Claim", "Table", "Figure", "HOLDS", "DOES_NOT_HOLD", "INCONCLUSIVE", "VERDICTS", "KINDS", "counts",
    "summary_line", "judge_superiority", "judge_non_inferiority", "judge_threshold", "judge_every",
    "judge_k_of_n", "Estimate", "mean_ci", "paired_wilcoxon", "paired_bootstrap", "seed_everything",
    "set_threads", "Progress", "atomic_write_bytes", "atomic_write_text", "to_jsonable", "write_run",
    "latest_run", "load_result",
]
