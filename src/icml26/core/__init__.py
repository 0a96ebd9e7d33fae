"""The small, paper-agnostic core: registry, judged statements and reports, statistics, seeding, the runner.

Nothing here knows about any paper or imports torch at import time.  A paper declares ``measure`` / ``judge``
(:mod:`.registry`), judges per-seed numbers into claims, checks and preconditions (:mod:`.judges`,
:mod:`.report`) and uses the ``progress`` it is given for progress bars, resumable pieces and artifacts.
"""

from icml26.progress import Progress  # noqa: I001  (a run's helper, kept outside the core)

from .io import atomic_write_bytes, atomic_write_text, latest_run, load_result, to_jsonable, write_run
from .judges import judge_every, judge_k_of_n, judge_non_inferiority, judge_superiority, judge_threshold
from .registry import Entry, Experiment, experiments, get, register, unavailable
from .report import (
    DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, KINDS, VERDICTS, Claim, Figure, Report, Table, counts, summary_line)
from .runner import EXECUTORS, judge_records, run_experiment
from .seeding import seed_everything, set_threads
from .stats import Estimate, mean_ci, paired_bootstrap, paired_wilcoxon

__all__ = [
    "Entry", "Experiment", "register", "get", "experiments", "unavailable", "run_experiment", "judge_records",
    "EXECUTORS", "Report", "Claim", "Table", "Figure", "HOLDS", "DOES_NOT_HOLD", "INCONCLUSIVE", "VERDICTS",
    "KINDS", "counts", "summary_line", "judge_superiority", "judge_non_inferiority", "judge_threshold",
    "judge_every", "judge_k_of_n", "Estimate", "mean_ci", "paired_wilcoxon", "paired_bootstrap",
    "seed_everything", "set_threads", "Progress", "atomic_write_bytes", "atomic_write_text", "to_jsonable",
    "write_run", "latest_run", "load_result",
]
