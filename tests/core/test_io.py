import os

import pytest

from icml26.core import atomic_write_text, latest_run, load_result, run_experiment, write_run
from icml26.core.io import RESULT_FIELDS


def test_atomic_write_crash_keeps_previous_content(tmp_path, monkeypatch):
    path = tmp_path / "result.json"
    atomic_write_text(path, "old")

    def boom(fd):
        raise OSError("disk died mid-write")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]  # no temp file left behind


def _result(slug="toy"):
    return {f: None for f in RESULT_FIELDS} | {"slug": slug, "claims": []}


def test_write_run_is_all_or_nothing(tmp_path):
    first = write_run(tmp_path, _result(), "# ok\n", {"a.png": b"png"})
    with pytest.raises(TypeError):
        write_run(tmp_path, _result(), "# broken\n", {"a.png": b"png", "b.png": object()})
    # The failed run left no folder (not even a hidden temporary one) and the first is intact.
    assert sorted(p.name for p in (tmp_path / "toy").iterdir()) == [first.name]
    assert (first / "report.md").read_text() == "# ok\n"
    assert latest_run(tmp_path, "toy") == first


def test_write_run_requires_schema(tmp_path):
    with pytest.raises(ValueError, match="missing required fields"):
        write_run(tmp_path, {"slug": "toy"}, "", {})


def test_run_experiment_writes_valid_result(tmp_path, toy_experiment):
    d = run_experiment("toy", preset="quick", out=tmp_path)
    assert d.parent == tmp_path / "toy"
    r = load_result(d)
    for f in RESULT_FIELDS:
        assert f in r
    assert r["seeds"] == list(range(6)) and r["preset"] == "quick"
    assert r["config"] == {"n": 8, "fail_at_seed": -1, "precondition_gap": 0.5}
    assert {c["id"] for c in r["claims"]} == {"P1", "C1", "C1c", "C2", "K1"}
    for c in r["claims"]:
        keys = {"id", "kind", "statement", "verdict", "requires", "controls", "no_control", "method", "baselines"}
        assert keys | {"test"} <= set(c)
    assert {c["id"]: c["kind"] for c in r["claims"]} == {
        "P1": "precondition",
        "C1": "claim",
        "C1c": "control",
        "C2": "claim",
        "K1": "check",
    }
    by = {c["id"]: c for c in r["claims"]}
    assert by["C1"]["controls"] == ["C1c"] and by["C2"]["no_control"] == "toy truth"
    assert r["counts"]["claim"]["holds"] == 2 and r["counts"]["check"]["holds"] == 1
    assert r["counts"]["control"]["holds"] == 1 and r["dev_seeds"] == [] and r["tuning"] == []
    assert len(r["records"]) == 6 and set(r["records"][0]) == {"a", "b", "t", "gap"}
    assert (d / "curve.png").read_bytes()[:4] == b"\x89PNG"
    md = (d / "report.md").read_text()
    assert md.index("## Preconditions") < md.index("## Claims") < md.index("## Controls") < md.index("## Checks")
    assert set(r["versions"]) >= {"python", "torch", "package"}


def test_failing_precondition_makes_dependent_claims_inconclusive(tmp_path, toy_experiment):
    d = run_experiment("toy", preset="quick", out=tmp_path, overrides={"precondition_gap": 0.0})
    by = {c["id"]: c for c in load_result(d)["claims"]}
    assert by["P1"]["verdict"] == "does not hold"
    assert by["C1"]["verdict"] == "inconclusive" and by["C1"]["reason"] == "setting invalid: P1"
    assert by["C1"]["measured_verdict"] == "holds"  # the rule's own verdict is kept for the reader
    assert by["C2"]["verdict"] == "holds"  # no requires: untouched
    assert "setting invalid: P1" in (d / "report.md").read_text()


def test_interrupted_run_keeps_finished_seeds(tmp_path, toy_experiment, calls):
    with pytest.raises(KeyboardInterrupt):
        run_experiment("toy", preset="quick", out=tmp_path, overrides={"fail_at_seed": 3})
    assert calls == [0, 1, 2] and latest_run(tmp_path, "toy") is None
    rec_dirs = list((tmp_path / "toy" / ".records").iterdir())
    assert len(rec_dirs) == 1 and sorted(p.name for p in rec_dirs[0].glob("*.json")) == [
        "seed0.json",
        "seed1.json",
        "seed2.json",
    ]


def test_rerun_resumes_and_recomputes_nothing_finished(tmp_path, toy_experiment, calls):
    first = load_result(run_experiment("toy", preset="quick", out=tmp_path))
    assert calls == list(range(6))
    calls.clear()
    again = load_result(run_experiment("toy", preset="quick", out=tmp_path))
    assert calls == [] and again["seeds_from_cache"] == 6
    assert again["records"] == first["records"] and again["claims"] == first["claims"]
    fresh = load_result(run_experiment("toy", preset="quick", out=tmp_path, fresh=True))
    assert calls == list(range(6)) and fresh["seeds_from_cache"] == 0 and fresh["records"] == first["records"]
    calls.clear()
    load_result(run_experiment("toy", preset="quick", seeds=8, out=tmp_path))
    assert calls == [6, 7]  # more seeds: only the new ones are measured


def test_an_edit_of_the_code_invalidates_stored_records(tmp_path, toy_experiment, calls, monkeypatch):
    from icml26.core import runner

    run_experiment("toy", preset="quick", out=tmp_path)
    calls.clear()
    monkeypatch.setattr(runner, "code_hash", lambda exp: "edited")
    run_experiment("toy", preset="quick", out=tmp_path)
    assert calls == list(range(6))


def test_code_hash_covers_the_paper_folder_and_core(tmp_path, toy_experiment):
    from icml26.core.runner import code_hash

    h = code_hash(toy_experiment)
    assert len(h) == 12 and h == code_hash(toy_experiment)


def test_jobs_and_submitit_give_the_in_process_numbers(tmp_path, toy_experiment):
    base = load_result(run_experiment("toy", preset="quick", out=tmp_path / "a"))
    par = load_result(run_experiment("toy", preset="quick", out=tmp_path / "b", jobs=2))
    assert par["records"] == base["records"] and par["claims"] == base["claims"]
    assert len({p for p in par["measure_s_per_seed"]}) == 6
    pytest.importorskip("submitit")
    sub = load_result(run_experiment("toy", preset="quick", seeds=3, out=tmp_path / "c", executor="submitit-local"))
    assert sub["records"] == base["records"][:3]


def test_interrupted_multi_paper_run_resumes_without_recomputing(tmp_path, toy_experiment, calls):
    from dataclasses import replace

    from typer.testing import CliRunner

    from icml26.cli import app
    from icml26.core import registry as reg
    from icml26.ski_rental import experiment as ski

    first, second, third = ski.EXPERIMENT.seeds["quick"]  # the paper's held-out quick seeds
    seen, state = [], {"die_at": second}

    def measure(c, s, p):
        if s == state["die_at"]:
            raise KeyboardInterrupt("simulated interruption")
        seen.append(s)
        return ski.measure(c, s, p)

    reg._REGISTRY["ski_rental"] = replace(ski.EXPERIMENT, measure=measure)
    cli = CliRunner()
    try:
        r = cli.invoke(app, ["run", "toy", "ski_rental", "--out", str(tmp_path)])
        assert r.exit_code != 0 and calls == list(range(6)) and seen == [first]
        calls.clear()
        seen.clear()
        state["die_at"] = -1
        r = cli.invoke(app, ["run", "toy", "ski_rental", "--out", str(tmp_path)])
        assert r.exit_code == 0, r.output
    finally:
        reg._REGISTRY["ski_rental"] = ski.EXPERIMENT
    assert calls == [] and seen == [second, third]  # the finished paper and the finished seed are not recomputed


def test_runner_limits_threads_during_measure_and_restores_them(tmp_path, toy_experiment):
    from dataclasses import replace

    import torch
    from threadpoolctl import threadpool_info

    from icml26.core import registry as reg

    seen = {}

    def probe(config, seed, progress):
        seen["torch"] = torch.get_num_threads()
        seen["blas"] = [p["num_threads"] for p in threadpool_info()]
        return toy_experiment.measure(config, seed, progress)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        reg._REGISTRY["toy"] = replace(toy_experiment, measure=probe, threads=1)
        run_experiment("toy", preset="quick", out=tmp_path)
        assert seen["torch"] == 1 and all(n == 1 for n in seen["blas"])
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match="threads"):
        replace(toy_experiment, threads=0)


def test_artifact_dir_is_handed_to_measure_and_survives_the_run(tmp_path, toy_experiment):
    from dataclasses import replace

    from icml26.core import registry as reg

    def with_artifact(config, seed, progress):
        from icml26.core.runner import code_hash

        assert progress.code_hash == code_hash(reg.get("toy"))  # for artifacts derived from the paper's code
        (progress.artifact_dir).mkdir(parents=True, exist_ok=True)
        (progress.artifact_dir / "model.pt").write_bytes(b"weights")
        return toy_experiment.measure(config, seed, progress)

    reg._REGISTRY["toy"] = replace(toy_experiment, measure=with_artifact)
    d = run_experiment("toy", preset="quick", out=tmp_path)
    assert (tmp_path / "toy" / ".artifacts" / "model.pt").read_bytes() == b"weights"
    assert latest_run(tmp_path, "toy") == d  # the hidden folders are never mistaken for a run


def test_bad_runner_arguments_name_the_argument(tmp_path, toy_experiment):
    with pytest.raises(ValueError, match="jobs"):
        run_experiment("toy", out=tmp_path, jobs=0)
    with pytest.raises(ValueError, match="executor"):
        run_experiment("toy", out=tmp_path, executor="cloud")


def test_checkpoint_builds_once_per_config_then_loads(tmp_path):
    import torch

    from icml26.core import Progress

    calls = []

    def build():
        calls.append(1)
        return {"model": {"w": torch.arange(3.0)}, "seconds": 1.5, "snapshots": {10: {"w": torch.zeros(2)}}}

    p = Progress(artifact_dir=tmp_path / "art")
    first = p.checkpoint("lm-full", {"steps": 5}, build)
    again = Progress(artifact_dir=tmp_path / "art").checkpoint("lm-full", {"steps": 5}, build)
    assert len(calls) == 1 and torch.equal(again["model"]["w"], first["model"]["w"]) and again["seconds"] == 1.5
    assert torch.equal(again["snapshots"][10]["w"], torch.zeros(2))
    p.checkpoint("lm-full", {"steps": 6}, build)  # another config is another artifact
    assert len(calls) == 2 and len(list((tmp_path / "art").glob("lm-full-*.pt"))) == 2
    Progress().checkpoint("lm-full", {"steps": 5}, build)  # no artifact folder: always built
    assert len(calls) == 3
    with pytest.raises(ValueError, match="name must be"):
        p.checkpoint("a/b", {}, build)


def test_run_files_are_world_readable_and_carry_provenance(tmp_path, toy_experiment):
    d = run_experiment("toy", preset="quick", seeds=2, out=tmp_path)
    assert all((f.stat().st_mode & 0o777) == 0o644 for f in d.iterdir())
    r = load_result(d)
    prov = r["provenance"]
    assert {"git_commit", "git_dirty", "cpu", "cores", "torch_threads", "load_avg_1m"} <= set(prov)
    assert prov["cores"] >= 1 and "scipy" in r["versions"]
    md = (d / "report.md").read_text()
    assert "smoke run, not the paper's verdict" in md and "progress.py" not in md


def test_checkpoint_build_does_not_depend_on_or_disturb_the_callers_rng(tmp_path):
    import torch

    from icml26.core import Progress, seed_everything

    def build():
        return {"w": torch.randn(3)}

    prog = Progress(artifact_dir=tmp_path / "a")
    seed_everything(0)
    a = prog.checkpoint("m", {"k": 1}, build)["w"]
    after_build = torch.randn(2)
    seed_everything(7)  # another seed builds the same artifact elsewhere
    b = Progress(artifact_dir=tmp_path / "b").checkpoint("m", {"k": 1}, build)["w"]
    assert torch.equal(a, b)  # whichever seed builds it
    seed_everything(0)
    prog.checkpoint("m", {"k": 1}, build)  # loaded this time
    assert torch.equal(torch.randn(2), after_build)  # the seed's stream is the same built or loaded


def test_rejudge_reuses_stored_records_after_a_code_edit(tmp_path, toy_experiment, calls, monkeypatch):
    from icml26.core import runner

    first = load_result(run_experiment("toy", preset="quick", out=tmp_path))
    calls.clear()
    monkeypatch.setattr(runner, "code_hash", lambda exp: "edited")  # e.g. only judge() changed
    again = load_result(run_experiment("toy", preset="quick", out=tmp_path, rejudge=True))
    assert calls == [] and again["records"] == first["records"]
    assert again["code_hash"] == "edited" and again["records_code_hash"] == first["code_hash"]
    with pytest.raises(FileNotFoundError, match="rejudge"):
        run_experiment("toy", preset="quick", seeds=9, out=tmp_path, rejudge=True)


def test_an_experiment_can_name_its_default_seeds(tmp_path, toy_experiment, calls, monkeypatch):
    """A tuple of seeds in ``Experiment.seeds`` (fresh seeds, disjoint from tuning ones) is what a run measures and
    what its result.json reports; a malformed one is refused naming the preset."""
    import dataclasses

    from icml26.core import Experiment
    from icml26.core import registry as reg

    exp = dataclasses.replace(toy_experiment, seeds={"quick": (10, 12), "full": 8})
    monkeypatch.setitem(reg._REGISTRY, "toy", exp)
    run_dir = run_experiment("toy", "quick", out=tmp_path)
    assert load_result(run_dir)["seeds"] == [10, 12]
    assert sorted(calls) == [10, 12]
    for bad in ((), (1, 1), (-1,), 0, [3, 4]):
        with pytest.raises(ValueError, match=r"seeds\['quick'\]"):
            Experiment(slug="toy2", presets=exp.presets, seeds={"quick": bad, "full": 2}, measure=exp.measure,
                       judge=exp.judge)  # fmt: skip
