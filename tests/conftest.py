import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")
TESTS = Path(__file__).resolve().parent
# pytest-xdist workers (pyproject: -n auto --dist loadgroup) each take one core; a lone process takes two threads
WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))

try:
    import torch

    torch.set_num_threads(1 if WORKERS > 1 else 2)
except ImportError:  # pragma: no cover
    pass


GLOO_PAPERS = ("upipe", "trace_du")  # a gloo job started while another one connects failed once in CI


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's ``--dist loadgroup`` a paper's tests (tests/SLUG/) and its parametrized tests elsewhere
    (``slug=...``, e.g. the thread-count test) share one worker, so the session's quick run of that paper
    (``quick_run``) is measured once."""
    for item in items:
        parts = Path(str(item.fspath)).resolve().relative_to(TESTS).parts
        slug = parts[0] if len(parts) > 1 and parts[0] not in ("core", "examples") else None
        params = getattr(getattr(item, "callspec", None), "params", {})
        slug = slug or params.get("slug")
        if slug in GLOO_PAPERS:  # their tests start gloo process groups on localhost: never two at once
            slug = "gloo"
        if isinstance(slug, str):
            item.add_marker(pytest.mark.xdist_group(slug))


# The quick preset, shrunk further so the whole test folder stays small on a shared 2-core machine.
UPIPE_SMALL = dict(
    exact_heads=(4,),
    curve_steps=3,
    curve_seq=32,
    mem_seq=(512,),
    mem_dim=64,
    mem_heads=8,
    mem_head_dim=8,
    layers=1,
    ffn_dim=128,
    mlp_chunks=2,
    step_seq=512,
    budget_mib=1.0,
    smax_start=256,
    smax_limit=8192,
    speed_seq=256,
    speed_steps=1,
)


@pytest.fixture
def upipe_small():
    """upipe's quick preset shrunk for the tests (its smoke test and the thread-count test), as overrides."""
    return dict(UPIPE_SMALL)


# Paper test folders whose models are tiny: one intra-op thread is faster there, and the 2 CPUs are shared.
ONE_THREAD_FOLDERS = {"faps", "lifil", "slaclip", "trace_du"}


@pytest.fixture(autouse=True)
def _one_torch_thread_for_tiny_models(request):
    """One torch thread for the tests of :data:`ONE_THREAD_FOLDERS` (restored afterwards)."""
    if request.path.parent.name not in ONE_THREAD_FOLDERS:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _no_global_torch_state_leaks():
    """A test that changes torch's default dtype or deterministic mode must put it back (a leak broke 39 tests)."""
    import torch

    dtype, det = torch.get_default_dtype(), torch.are_deterministic_algorithms_enabled()
    yield
    assert torch.get_default_dtype() == dtype, f"the test left torch's default dtype at {torch.get_default_dtype()}"
    assert torch.are_deterministic_algorithms_enabled() == det, "the test left torch's deterministic mode changed"


def _shared_quick_run(slug: str):
    """A quick run of ``slug`` that CI already measured from the installed wheel (``ICML26_QUICK_RUNS``: the folder of
    its ``icml26 run all --preset quick``), taken only if it is the very run this session would measure: the default
    quick config and seeds, the same code hash and the same versions of every package it recorded. Else None."""
    import importlib
    import json

    from icml26.core import latest_run, registry
    from icml26.core.io import to_jsonable
    from icml26.core.runner import code_hash, resolve_seeds

    folder = os.environ.get("ICML26_QUICK_RUNS")
    run = latest_run(folder, slug) if folder else None
    if run is None:
        return None
    r = json.loads((run / "result.json").read_text())
    exp = registry.get(slug)
    if (
        r["preset"] != "quick"
        or r["config"] != json.loads(json.dumps(to_jsonable(exp.presets["quick"])))
        or r["seeds"] != resolve_seeds(None, exp.seeds["quick"])
        or r["code_hash"] != code_hash(exp)
    ):
        return None
    for name, version in r["versions"].items():
        if name in ("python", "package", "platform"):
            continue
        try:
            mod = importlib.import_module(name)
        except ImportError:
            return None
        if str(getattr(mod, "__version__", "unknown")) != version:
            return None
    return run


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory):
    """``quick_run(slug)``: the run folder of ``slug``'s quick preset, measured once per test session with the
    caller at 2 threads (torch and ICML26_NUM_THREADS). The paper's smoke test and the thread-count test
    (tests/core/test_reproducible.py) share it, so the suite pays for each quick preset once. upipe's is its
    quick preset shrunk to UPIPE_SMALL, one seed. In CI the quick presets already ran from the installed wheel
    (``.ci/run``): a run of the same config, seeds, code and package versions is taken from there
    (:func:`_shared_quick_run`) instead of measuring it again (not upipe's: the tests use its shrunk preset)."""
    import torch

    from icml26.core import run_experiment

    runs: dict = {}

    def get(slug: str):
        if slug not in runs and slug != "upipe" and (shared := _shared_quick_run(slug)) is not None:
            runs[slug] = shared
        if slug not in runs:
            before, env = torch.get_num_threads(), os.environ.get("ICML26_NUM_THREADS")
            torch.set_num_threads(2)
            os.environ["ICML26_NUM_THREADS"] = "2"
            try:
                small = dict(seeds=1, overrides=UPIPE_SMALL) if slug == "upipe" else {}
                runs[slug] = run_experiment(slug, preset="quick", out=tmp_path_factory.mktemp(f"{slug}-quick"), **small)
            finally:
                torch.set_num_threads(before)
                if env is None:
                    os.environ.pop("ICML26_NUM_THREADS", None)
                else:
                    os.environ["ICML26_NUM_THREADS"] = env
        return runs[slug]

    return get


def _v3_reference(slug: str, experiment, full) -> dict:
    """results/SLUG/result.json, after asserting the evidence-v3 contract every migrated paper keeps: the full preset's
    seeds, reported seeds held out from the dev seeds, a ledger whose entries that saw reported seeds say so (a lapse
    recorded, never hidden), verdicts equal to a re-judge of the stored records (not stale against the judge), every
    claim controlled by control statements (or a no_control reason), nothing uncontrolled, every check passing."""
    import json
    from pathlib import Path

    from icml26.core import HOLDS
    from icml26.core.runner import judge_records

    r = json.loads((Path(__file__).resolve().parents[1] / "results" / slug / "result.json").read_text())
    assert r["preset"] == "full" and r["seeds"] == list(experiment.seeds["full"])
    assert r["dev_seeds"] and not set(r["seeds"]) & set(r["dev_seeds"])
    assert r["tuning"]
    reported = set(experiment.seeds["full"]) | set(experiment.seeds["quick"])
    for t in r["tuning"]:
        saw = sorted(set(t["seeds"]) & reported)
        assert t["saw reported seeds"] == (saw or "no"), t["variant"]
        assert saw or set(t["seeds"]) <= set(r["dev_seeds"]), t["variant"]
    rejudged = judge_records(experiment, full, r["records"], r["seeds"]).by_id()
    assert {c["id"]: c["verdict"] for c in r["claims"]} == {i: c.verdict for i, c in rejudged.items()}
    by_id = {c["id"]: c for c in r["claims"]}
    for c in by_id.values():
        if c["kind"] == "claim":
            assert c["controls"] or c["no_control"], c["id"]
            assert all(by_id[k]["kind"] == "control" for k in c["controls"]), c["id"]
    assert r["counts"]["uncontrolled"] == {"holds": 0, "does not hold": 0, "inconclusive": 0}
    assert all(c["verdict"] == HOLDS for c in by_id.values() if c["kind"] == "check")
    return r


@pytest.fixture
def v3_reference():
    """``v3_reference(slug, EXPERIMENT, FULL) -> result.json`` with the evidence-v3 contract asserted (see
    :func:`_v3_reference`); each paper's test_reference.py adds its own assertions on the returned run."""
    return _v3_reference
