"""Issue 36: a seed's numbers must not depend on the caller's thread setting."""

from dataclasses import replace

import pytest
import torch

from icml26.core import registry as reg
from icml26.core import run_experiment
from icml26.core.io import load_result
from icml26.manifest import PAPERS


@pytest.mark.parametrize("slug", [p["slug"] for p in PAPERS])
def test_every_paper_pins_its_measure_threads(slug):
    if slug in reg.unavailable():
        pytest.skip(reg.unavailable()[slug])
    assert reg.get(slug).threads is not None, f"{slug}'s Experiment must set threads= (issue 36)"


def test_caller_threads_do_not_change_records(tmp_path, toy_experiment):
    """The toy pinned to one thread gives identical records whether the caller runs 1 or 2 torch threads."""
    reg._REGISTRY["toy"] = replace(toy_experiment, threads=1)
    before = torch.get_num_threads()
    try:
        runs = []
        for n in (1, 2):
            torch.set_num_threads(n)
            runs.append(load_result(run_experiment("toy", seeds=3, out=tmp_path / f"t{n}")))
    finally:
        torch.set_num_threads(before)
    assert runs[0]["records"] == runs[1]["records"]
    assert runs[0]["measure_threads"] == runs[1]["measure_threads"] == 1
    assert torch.get_num_threads() == before and not torch.are_deterministic_algorithms_enabled()
