import re
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from icml26.cli import app
from icml26.core import experiments, load_result

runner = CliRunner()
README = Path(__file__).resolve().parents[2] / "README.md"


def test_unknown_slug_lists_known_ones(tmp_path, toy_experiment):
    r = runner.invoke(app, ["run", "nope", "--out", str(tmp_path)])
    assert r.exit_code != 0
    assert "unknown slug" in r.output and "toy" in r.output


def test_bad_preset_and_seeds(tmp_path, toy_experiment):
    r = runner.invoke(app, ["run", "toy", "--preset", "huge", "--out", str(tmp_path)])
    assert r.exit_code != 0 and "--preset" in r.output and "quick" in r.output
    r = runner.invoke(app, ["run", "toy", "--seeds", "0", "--out", str(tmp_path)])
    assert r.exit_code != 0 and "--seeds" in r.output


def test_run_list_report_end_to_end(tmp_path, toy_experiment):
    r = runner.invoke(app, ["run", "toy", "--seeds", "7", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    last = Path(r.stdout.strip().splitlines()[-1])
    assert last.parent == tmp_path / "toy" and load_result(last)["seeds"] == list(range(7))
    r = runner.invoke(app, ["list", "--out", str(tmp_path)])
    assert r.exit_code == 0 and re.search(
        r"toy\s+A toy experiment.*claims: 2/2 hold; controls reject 1/1; checks: 1/1 pass.*C1", r.output
    )
    assert "you get: nothing" in r.output  # the component line
    r = runner.invoke(app, ["report", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "REPORT.md").read_text()
    assert text.index("## Claims") < text.index("A toy experiment")
    assert "| toy | quick | claim | C1 |" in text and "| toy | quick | check | K1 |" in text
    # claims, checks and preconditions counted apart; a quick run is labelled as a smoke run
    assert "| toy | quick: smoke run, not the paper's verdict | 2/2 | 0/0 | 1/1 | 1/1 | 1/1 |" in text
    assert f"](toy/{last.name}/curve.png)" in text


def test_report_without_runs_fails_clearly(tmp_path):
    r = runner.invoke(app, ["report", "--out", str(tmp_path)])
    assert r.exit_code != 0 and "no runs" in r.output


def test_readme_table_lists_every_registered_slug():
    text = README.read_text()
    rows = set(re.findall(r"^\| `([a-z0-9_]+)` \|", text, flags=re.M))
    missing = set(experiments()) - rows
    assert not missing, f"README's paper table lacks {missing}"


def test_ci_runs_the_readme_test_command():
    readme_cmd = "python -m pytest -q"
    assert readme_cmd in README.read_text()
    assert readme_cmd in (README.parent / ".ci" / "run").read_text()


def test_cli_runs_ski_rental_quick_end_to_end(tmp_path):
    """The first real paper through the whole contract: run -> result.json -> report."""
    r = runner.invoke(app, ["run", "ski_rental", "--preset", "quick", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    run_dir = Path(r.stdout.strip().splitlines()[-1])
    res = load_result(run_dir)
    assert res["slug"] == "ski_rental" and res["preset"] == "quick" and res["wall_time_s"] > 0
    assert res["claims"] and all(c["verdict"] in ("holds", "does not hold", "inconclusive") for c in res["claims"])
    assert {"python", "torch", "package"} <= set(res["versions"])
    assert any(p.suffix == ".png" for p in run_dir.iterdir())
    r = runner.invoke(app, ["report", "--out", str(tmp_path)])
    assert r.exit_code == 0 and "| ski_rental | quick |" in (tmp_path / "REPORT.md").read_text()


def test_failing_check_exits_3_after_writing_the_run(tmp_path, toy_experiment, monkeypatch):
    import toyexp

    from icml26.core import judge_threshold

    orig = toyexp.judge

    def broken(config, records, report):
        orig(config, records, report)
        report.add_claim(judge_threshold("K2", "never", ("a", [r["a"] for r in records]), threshold=9.0, kind="check"))

    from dataclasses import replace

    from icml26.core import registry as reg

    reg._REGISTRY["toy"] = replace(toy_experiment, judge=broken)
    r = runner.invoke(app, ["run", "toy", "--out", str(tmp_path)])
    assert r.exit_code == 3, r.output
    run_dir = Path(r.stdout.strip().splitlines()[-1])
    md = (run_dir / "report.md").read_text()
    assert md.index("FAILING CHECKS") < md.index("## Claims") and "K2" in md


def test_bad_jobs_and_executor(tmp_path, toy_experiment):
    r = runner.invoke(app, ["run", "toy", "--jobs", "0", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "--jobs" in r.output
    r = runner.invoke(app, ["run", "toy", "--executor", "cloud", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "--executor" in r.output and "slurm" in r.output


def test_list_and_help_import_no_paper_and_no_torch(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; from typer.testing import CliRunner; from icml26.cli import app; r = CliRunner()\n"
        f"assert r.invoke(app, ['list', '--out', {str(tmp_path)!r}]).exit_code == 0\n"
        "assert r.invoke(app, ['--help']).exit_code == 0\n"
        "bad = [m for m in sys.modules if m == 'torch' or (m.startswith('icml26.') and m.count('.') >= 1 "
        "and m.split('.')[1] not in ('cli', 'core', 'manifest', 'progress'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_version_and_python_dash_m():
    import subprocess
    import sys

    from icml26 import __version__

    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout.strip() == f"icml26 {__version__}"
    out = subprocess.run([sys.executable, "-m", "icml26", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"icml26 {__version__}"


def test_usage_errors_are_one_line_before_any_work(tmp_path, toy_experiment, calls, monkeypatch):
    import icml26.manifest

    monkeypatch.setattr(icml26.manifest, "PLANNED", ("someday",))  # every paper is built: plant a planned slug
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = {
        ("run", "someday"): "planned, not yet built",
        ("run", "all", "toy"): "either 'all' or a list",
        ("run", "toy", "--out", str(afile)): "is a file",
    }
    for args, msg in cases.items():
        r = runner.invoke(app, list(args))
        assert r.exit_code == 2 and msg in r.output and "Traceback" not in r.output, (args, r.output)
    assert calls == []  # nothing was measured
    import shutil

    monkeypatch.setattr(shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10 * 2**30, 10 * 2**30 - 2**20, 2**20))
    r = runner.invoke(app, ["run", "toy", "--out", str(tmp_path / "full")])
    assert r.exit_code == 2 and "full disk: 1 MB free" in r.output and calls == []


def test_interrupt_says_how_to_resume_and_exits_130(tmp_path, toy_experiment):
    import toyexp

    from icml26.core import registry as reg

    reg._REGISTRY["toy"] = replace(
        toy_experiment, presets={**toy_experiment.presets, "quick": toyexp.ToyConfig(fail_at_seed=2)}
    )
    r = runner.invoke(app, ["run", "toy", "--out", str(tmp_path)])
    assert r.exit_code == 130 and "rerun the same command to resume" in r.output


def test_list_and_report_prefer_the_latest_full_run(tmp_path, toy_experiment):
    runner.invoke(app, ["run", "toy", "--preset", "full", "--seeds", "3", "--out", str(tmp_path)])
    runner.invoke(app, ["run", "toy", "--seeds", "3", "--out", str(tmp_path)])  # a newer quick run
    r = runner.invoke(app, ["list", "--out", str(tmp_path)])
    assert "[full]" in r.output and "smoke run" not in r.output


def readme_counts(claims: list[dict]) -> str:
    """The README status column's counts: claims with a control arm (or a closed-form truth) apart from the
    uncontrolled ones, then controls, checks and preconditions (recounted from the statements, as `icml26 list`
    does)."""
    from icml26.core import counts

    k = counts(claims)
    n = {kind: sum(v.values()) for kind, v in k.items()}
    parts = [f"claims {k['claim']['holds']}/{n['claim']} hold"] if n["claim"] or not n["uncontrolled"] else []
    parts += [f"uncontrolled claims {k['uncontrolled']['holds']}/{n['uncontrolled']} hold"] if n["uncontrolled"] else []
    parts += [f"controls reject {k['control']['holds']}/{n['control']}"] if n["control"] else []
    parts += [f"checks {k['check']['holds']}/{n['check']} pass"]
    return ", ".join(parts + [f"preconditions {k['precondition']['holds']}/{n['precondition']} hold"])


def test_readme_status_rows_agree_with_the_reference_results():
    """Every 'done' or 'partial' row quotes the claim/check/precondition counts of results/SLUG/result.json."""
    import json

    results = README.parent / "results"
    rows = dict(re.findall(r"^\| `([a-z0-9_]+)` \|.*\| ((?:done|partial)[^|]*) \|$", README.read_text(), flags=re.M))
    assert rows, "no done rows found in the README"
    for slug, status in rows.items():
        path = results / slug / "result.json"
        assert path.exists(), f"README says {slug} is done but results/{slug}/ has no reference run"
        r = json.loads(path.read_text())
        assert r["preset"] == "full", f"results/{slug} is a {r['preset']} run"
        want = readme_counts(r["claims"])
        assert want in status, f"README row of {slug} does not say '{want}': {status}"


def test_report_exports_and_reads_the_shipped_reference(tmp_path, toy_experiment):
    import csv
    import json

    runner.invoke(app, ["run", "toy", "--seeds", "3", "--out", str(tmp_path)])
    r = runner.invoke(app, ["report", "--out", str(tmp_path), "--format", "csv"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((tmp_path / "claims.csv").open()))
    assert {(x["id"], x["kind"]) for x in rows} == {
        ("P1", "precondition"),
        ("C1", "claim"),
        ("C1c", "control"),
        ("C2", "claim"),
        ("K1", "check"),
    }
    r = runner.invoke(app, ["report", "--out", str(tmp_path), "--format", "json"])
    assert json.loads((tmp_path / "claims.json").read_text())[0]["paper"] == "toy"
    r = runner.invoke(app, ["report", "--out", str(tmp_path), "--format", "pdf"])
    assert r.exit_code == 2 and "--format" in r.output
    r = runner.invoke(app, ["report", "--out", str(tmp_path)])
    assert (tmp_path / "overview.png").read_bytes()[:4] == b"\x89PNG"
    out = tmp_path / "ref"
    r = runner.invoke(app, ["report", "--reference", str(README.parent / "results"), "--out", str(out)])
    assert r.exit_code == 0, r.output
    text = (out / "REPORT.md").read_text()
    assert "| ski_rental | full |" in text
    links = re.findall(r"\]\(([^)]+\.png)\)", text)
    assert links and all((out / link).exists() for link in links)  # figure links resolve from REPORT.md


def test_seed_lists_and_config_overrides_from_the_command_line(tmp_path, toy_experiment):
    r = runner.invoke(app, ["run", "toy", "--seeds", "3,7,11", "--set", "precondition_gap=0.0", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    res = load_result(Path(r.stdout.strip().splitlines()[-1]))
    assert res["seeds"] == [3, 7, 11] and res["config"]["precondition_gap"] == 0.0
    assert {c["id"]: c["verdict"] for c in res["claims"]}["P1"] == "does not hold"
    for args, msg in {
        ("--set", "nope=1"): "key one of",
        ("--set", "n=abc"): "valid int",
        ("--set", "n=1.5"): "expected a int",
        ("--seeds", "1,1"): "distinct",
        ("--seeds", "x"): "--seeds",
    }.items():
        r = runner.invoke(app, ["run", "toy", *args, "--out", str(tmp_path)])
        assert r.exit_code == 2 and msg in r.output and "Traceback" not in r.output, (args, r.output)


def test_progress_prints_plain_lines_when_not_a_terminal(capsys):
    from icml26.core import Progress

    list(Progress(show=True).track(range(3), description="seeds"))
    err_text = capsys.readouterr().err
    assert "seeds: 1/3 done" in err_text and "seeds: 3/3 done" in err_text and "ETA" in err_text
    assert "seeds: 2/3" not in err_text  # throttled: the first, the last, and one line per 15 s between


def _crash(config, seed, progress):
    raise RuntimeError("simulated crash in measure")


def test_a_crashing_paper_does_not_stop_the_others(tmp_path, toy_experiment):
    """Issue 44: `run all` went down with the first paper that crashed; now the others run and the exit code is 1."""
    from icml26.core import registry as reg

    reg._REGISTRY["toy_crash"] = replace(toy_experiment, slug="toy_crash", title="crashes", measure=_crash)
    try:
        r = runner.invoke(app, ["run", "toy_crash", "toy", "--seeds", "3", "--out", str(tmp_path)])
    finally:
        reg._REGISTRY.pop("toy_crash", None)
    assert r.exit_code == 1, r.output
    assert "toy_crash failed" in r.output and "failed to run: toy_crash" in r.output
    assert "simulated crash in measure" in r.output  # the traceback is shown
    assert (tmp_path / "toy").is_dir() and not list((tmp_path / "toy_crash").glob("2*"))


def test_list_shows_the_shipped_reference_verdicts(tmp_path, monkeypatch):
    """Issue 44: in a checkout, a paper never run here shows its results/SLUG verdicts, labelled reference; with no
    reference folder (an installed wheel) it says 'not run yet'."""
    from icml26 import cli

    monkeypatch.chdir(tmp_path)  # no ./results here: the checkout's results/ is found beside the package
    r = runner.invoke(app, ["list", "--out", str(tmp_path / "runs")])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if "[reference full run]" in ln]
    assert len(lines) == len(list((README.parent / "results").glob("*/result.json"))) == 19
    monkeypatch.setattr(cli, "CHECKOUT_RESULTS", tmp_path / "nowhere")
    r = runner.invoke(app, ["list", "--out", str(tmp_path / "runs")])
    assert r.exit_code == 0 and "reference" not in r.output and r.output.count("not run yet") >= 19
