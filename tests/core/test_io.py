import json
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
    assert r["seeds"] == list(range(6)) and r["preset"] == "quick" and r["config"] == {"n": 8, "fail_at_seed": -1}
    assert {c["id"] for c in r["claims"]} == {"C1", "C2"}
    for c in r["claims"]:
        assert {"id", "statement", "verdict", "method", "baselines", "test"} <= set(c)
    assert (d / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert "## Claims" in (d / "report.md").read_text()
    assert set(r["versions"]) >= {"python", "torch", "package"}
    assert not (tmp_path / "toy" / ".cache").exists() or not any((tmp_path / "toy" / ".cache").iterdir())


def test_interrupted_run_keeps_finished_pieces(tmp_path, toy_experiment, calls):
    with pytest.raises(KeyboardInterrupt):
        run_experiment("toy", preset="quick", out=tmp_path, overrides={"fail_at_seed": 3})
    assert calls == [0, 1, 2] and latest_run(tmp_path, "toy") is None
    cache_dirs = list((tmp_path / "toy" / ".cache").iterdir())
    assert len(cache_dirs) == 1 and len(list(cache_dirs[0].glob("*.json"))) == 3


def test_rerun_resumes_from_the_interrupted_attempt(tmp_path, toy_experiment, calls):
    from dataclasses import replace

    from icml26.core import registry as reg

    state = {"interrupt": True}

    def flaky(config, seeds, progress):
        if state["interrupt"]:  # first attempt: finish seed 0 with a marked value, then die
            state["interrupt"] = False
            progress.cached("seed0", lambda: {"a": 1.25, "b": 0.0})
            raise KeyboardInterrupt
        return toy_experiment.run(config, seeds, progress)

    reg._REGISTRY["toy"] = replace(toy_experiment, run=flaky)
    with pytest.raises(KeyboardInterrupt):
        run_experiment("toy", preset="quick", out=tmp_path)
    d = run_experiment("toy", preset="quick", out=tmp_path)
    r = load_result(d)
    assert r["resumed_pieces"] == 1
    assert 0 not in calls and calls == [1, 2, 3, 4, 5]
    assert json.loads((d / "result.json").read_text())["metrics"]["a"][0] == 1.25
    cache = tmp_path / "toy" / ".cache"
    assert not cache.exists() or not any(cache.iterdir())  # cache cleared after a finished run


def test_runner_limits_threads_during_run_and_restores_them(tmp_path, toy_experiment):
    from dataclasses import replace

    import torch
    from threadpoolctl import threadpool_info

    from icml26.core import registry as reg

    seen = {}

    def probe(config, seeds, progress):
        seen["torch"] = torch.get_num_threads()
        seen["blas"] = [p["num_threads"] for p in threadpool_info()]
        return toy_experiment.run(config, seeds, progress)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        reg._REGISTRY["toy"] = replace(toy_experiment, run=probe, threads=1)
        run_experiment("toy", preset="quick", out=tmp_path)
        assert seen["torch"] == 1 and all(n == 1 for n in seen["blas"])
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match="threads"):
        replace(toy_experiment, threads=0)


def test_artifact_dir_is_handed_to_run_and_survives_the_run(tmp_path, toy_experiment):
    from dataclasses import replace

    from icml26.core import registry as reg

    def with_artifact(config, seeds, progress):
        (progress.artifact_dir).mkdir(parents=True, exist_ok=True)
        (progress.artifact_dir / "model.pt").write_bytes(b"weights")
        return toy_experiment.run(config, seeds, progress)

    reg._REGISTRY["toy"] = replace(toy_experiment, run=with_artifact)
    d = run_experiment("toy", preset="quick", out=tmp_path)
    assert (tmp_path / "toy" / ".artifacts" / "model.pt").read_bytes() == b"weights"
    assert latest_run(tmp_path, "toy") == d  # the hidden folder is never mistaken for a run


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
