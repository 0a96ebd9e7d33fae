"""Command line: ``icml26 list | run SLUG... | verify SLUG... | report``.

Nothing here imports a paper module or torch until a paper is run: ``list``, ``report``, ``--help`` and argument
checks read the static manifest (:mod:`icml26.manifest`) and the stored result.json files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .core.io import atomic_write_text, latest_run, load_result
from .core.registry import PRESETS, experiments, unavailable
from .core.report import _uncontrolled, counts, summary_line
from .core.runner import EXECUTORS

app = typer.Typer(no_args_is_help=True, help="ICML 2026 methods and their reproductions.")
err = Console(stderr=True, soft_wrap=True)  # one line per message, however long the path

_MARK = {"holds": "✓", "does not hold": "✗", "inconclusive": "?"}
EXIT_FAILING_CHECK = 3


def _fail(msg: str) -> None:
    err.print(f"[red]error:[/red] {msg}", highlight=False)
    raise typer.Exit(code=2)


def _interrupted() -> None:
    """Ctrl-C during a run: finished seeds are stored records, so the same command resumes."""
    err.print("interrupted: finished seeds are saved; rerun the same command to resume", highlight=False)
    raise typer.Exit(code=130)


def _version(value: bool) -> None:
    if value:
        from icml26 import __version__

        typer.echo(f"icml26 {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """ICML 2026 methods and their reproductions."""


MIN_FREE_MB = 50  # a run folder with figures and per-seed records is a few MB; less free space than this fails


def _check_out(out: Path) -> None:
    """Refuse an --out that is a file, cannot be written or is on a full disk, before any work starts."""
    import shutil

    probe = out
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if out.exists() and not out.is_dir():
        _fail(f"--out must be a folder; {out} is a file")
    if not os.access(probe, os.W_OK):
        _fail(f"--out {out} is not writable (checked {probe})")
    free_mb = shutil.disk_usage(probe).free / 2**20
    if free_mb < MIN_FREE_MB:
        _fail(f"--out {out} is on a full disk: {free_mb:.0f} MB free, a run needs at least {MIN_FREE_MB} MB")


def latest_results(out: Path) -> dict[str, dict]:
    """Per known slug with a run under ``out``: its latest full run, else its latest run (a quick smoke run)."""
    found = {}
    for slug in experiments():
        newest = latest_run(out, slug)
        if newest is None:
            continue
        runs = sorted(
            (p for p in newest.parent.iterdir() if (p / "result.json").exists() and p.name[0] != "."), reverse=True
        )
        for d in runs:
            r = load_result(d)
            if r["preset"] == "full":
                break
        else:
            d, r = newest, load_result(newest)
        found[slug] = {"dir": d, **r}
    return found


def _preset_label(r: dict) -> str:
    return "full" if r["preset"] == "full" else f"{r['preset']}: smoke run, not the paper's verdict"


def _counts_of(r: dict) -> dict:
    return counts(r["claims"])  # recounted: a run stored before controls existed shows its claims as uncontrolled


CHECKOUT_RESULTS = Path(__file__).resolve().parents[2] / "results"  # a source checkout's shipped reference runs


def reference_results(folder: Path | None = None) -> dict[str, dict]:
    """The shipped reference run of each known paper, ``folder/SLUG/result.json`` (default: ``./results``, else the
    checkout's ``results/``; an installed wheel has none, and nothing is read)."""
    if folder is None:
        folder = next((f for f in (Path("results"), CHECKOUT_RESULTS) if f.is_dir()), None)
        if folder is None:
            return {}
    known = experiments()
    return {
        d.name: {"dir": d, **load_result(d)}
        for d in sorted(folder.glob("*"))
        if d.name in known and (d / "result.json").exists()
    }


@app.command("list")
def list_(
    out: Annotated[Path, typer.Option(help="Folder holding earlier runs.")] = Path("runs"),
    reference: Annotated[
        Path | None,
        typer.Option(help="Reference runs shown for papers not run here (default: ./results, else the checkout's)."),
    ] = None,
) -> None:
    """Every paper, one line each, with the verdicts of its latest full run (else its latest quick smoke run); a paper
    never run here shows its shipped reference run's verdicts, labelled ``reference``."""
    latest = latest_results(out)
    refs = reference_results(reference) if any(s not in latest for s in experiments()) else {}
    missing = unavailable()
    for slug, entry in experiments().items():
        r, label = latest.get(slug), None
        if r is None and slug in refs:
            r, label = refs[slug], f"reference {refs[slug]['preset']} run"
        if r is None:
            verdicts = "not run yet"
        else:
            k = _counts_of(r)
            claims = " ".join(
                f"{c['id']}{_MARK.get(c['verdict'], '?')}" for c in r["claims"] if c.get("kind", "claim") == "claim"
            )
            verdicts = f"[{label or _preset_label(r)}] {summary_line(k)} | {claims}"
        typer.echo(f"{slug:<20} {entry.title[:60]:<60} {verdicts}")
        if entry.component:
            typer.echo(f"{'':<20} you get: {entry.component}")
        if slug in missing:
            typer.echo(f"{'':<20} unavailable: {missing[slug]}")


@app.command()
def run(
    slugs: Annotated[list[str], typer.Argument(help="Paper slugs, or 'all'.")],
    preset: Annotated[str, typer.Option(help="quick (< 60 s each) or full.")] = "quick",
    seeds: Annotated[
        str | None, typer.Option(help="A number of seeds (0..N-1) or a list such as 3,7,11 (default: the preset's).")
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config field: --set key=value (repeatable).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for run folders.")] = Path("runs"),
    jobs: Annotated[int, typer.Option(help="Seeds measured in parallel (local processes or SLURM array).")] = 1,
    executor: Annotated[str, typer.Option(help="local, slurm (submitit) or submitit-local.")] = "local",
    partition: Annotated[str | None, typer.Option(help="SLURM partition (--executor slurm).")] = None,
    time_min: Annotated[int, typer.Option("--time", help="SLURM time limit per seed, minutes.")] = 60,
    fresh: Annotated[bool, typer.Option(help="Recompute every seed (ignore stored records).")] = False,
    rejudge: Annotated[bool, typer.Option(help="Re-judge stored records though the code changed.")] = False,
    dev: Annotated[
        bool, typer.Option(help="A design run on the paper's dev (tuning) seeds, labelled so; not a reported verdict.")
    ] = False,
) -> None:
    """Run reproductions; write OUT/SLUG/<UTC timestamp>/ and print its path last.

    Exits 3 (after writing the run folder) when a check, a guarantee of our own code, fails, and 1 when a paper
    crashed (the other papers still run and are written).
    """
    exps = experiments()
    if preset not in PRESETS:
        _fail(f"--preset must be one of {', '.join(PRESETS)}; got {preset!r}")
    seed_arg = _parse_seeds(seeds)
    if jobs < 1:
        _fail(f"--jobs must be an integer >= 1; got {jobs}")
    if executor not in EXECUTORS:
        _fail(f"--executor must be one of {', '.join(EXECUTORS)}; got {executor!r}")
    if fresh and rejudge:
        _fail("--fresh recomputes every seed and --rejudge reuses stored ones: pick one")
    if time_min < 1:
        _fail(f"--time must be a number of minutes >= 1; got {time_min}")
    if "all" in slugs and slugs != ["all"]:
        _fail("'all' runs every paper: give either 'all' or a list of slugs, not both")
    chosen = list(exps) if slugs == ["all"] else slugs
    from .manifest import PLANNED

    planned = [s for s in chosen if s in PLANNED and s not in exps]
    if planned:
        _fail(f"{', '.join(planned)}: planned, not yet built (see the README's paper table)")
    unknown = [s for s in chosen if s not in exps]
    if unknown:
        _fail(f"unknown slug(s) {', '.join(unknown)}; known: {', '.join(exps) or '(none)'}, or 'all'")
    _check_out(out)
    missing = unavailable()
    if slugs == ["all"]:
        for s in [s for s in chosen if s in missing]:
            err.print(f"[yellow]skipping[/yellow] {s}: {missing[s]}", highlight=False)
        chosen = [s for s in chosen if s not in missing]
    elif any(s in missing for s in chosen):
        _fail("; ".join(f"{s}: {missing[s]}" for s in chosen if s in missing))

    from .core.runner import run_experiment
    from .core.seeding import set_threads

    set_threads()
    dirs: list[Path] = []
    failing: list[str] = []
    crashed: list[str] = []
    for k, slug in enumerate(chosen, 1):
        err.print(f"[bold]{slug}[/bold] ({preset}, paper {k}/{len(chosen)})", highlight=False)
        try:
            run_dir = run_experiment(
                slug,
                preset=preset,
                seeds=seed_arg,
                out=out,
                show_progress=True,
                jobs=jobs,
                executor=executor,
                slurm={"partition": partition, "time_min": time_min},
                fresh=fresh,
                rejudge=rejudge,
                dev=dev,
                overrides=_overrides(slug, preset, set_),
            )
        except KeyboardInterrupt:
            _interrupted()
        except ValueError as e:
            if "dev seeds" in str(e) or "dev_seeds" in str(e):
                _fail(str(e).replace("dev=True (--dev)", "--dev"))
            raise
        except Exception:  # one paper's crash must not cost the others their runs: report it, go on, exit 1
            if len(chosen) == 1:
                raise
            err.print_exception(max_frames=8)
            err.print(f"[red]{slug} failed[/red]; going on with the other papers", highlight=False)
            crashed.append(slug)
            continue
        dirs.append(run_dir)
        failing += _summary([run_dir])  # each paper's verdicts as soon as it finishes
    for d in dirs:
        print(d)
    if crashed:
        err.print(f"[red]failed to run:[/red] {', '.join(crashed)} (tracebacks above)", highlight=False)
        raise typer.Exit(code=1)
    if failing:
        err.print(f"[red]failing checks (defects, not findings):[/red] {', '.join(failing)}", highlight=False)
        raise typer.Exit(code=EXIT_FAILING_CHECK)


@app.command()
def verify(
    slugs: Annotated[list[str], typer.Argument(help="Paper slugs, or 'all' (every paper with a reference run).")],
    preset: Annotated[str, typer.Option(help="The preset to run; must be the reference run's preset.")] = "full",
    reference: Annotated[Path, typer.Option(help="Folder of reference runs (REFERENCE/SLUG/result.json).")] = Path(
        "results"
    ),
    out: Annotated[Path, typer.Option(help="Folder for the new run folders.")] = Path("runs"),
    rtol: Annotated[float, typer.Option(help="Relative tolerance for claims' and preconditions' numbers.")] = 0.1,
    check_rtol: Annotated[float, typer.Option(help="Relative tolerance for checks' numbers.")] = 1e-6,
    timing_rtol: Annotated[
        float, typer.Option(help="Relative tolerance for the numbers of wall-clock statements (speed, throughput).")
    ] = 0.5,
    jobs: Annotated[int, typer.Option(help="Seeds measured in parallel.")] = 1,
) -> None:
    """Run the preset and compare every verdict and judged number with the reference run.

    Prints what moved beyond tolerance; exits 0 when everything reproduces and 1 when a verdict or a number
    changed (stored records of the same code and config are reused: --out a fresh folder to recompute).
    """
    from .verify import compare, knife_edges

    if preset not in PRESETS:
        _fail(f"--preset must be one of {', '.join(PRESETS)}; got {preset!r}")
    if rtol < 0 or check_rtol < 0 or timing_rtol < 0:
        _fail(f"--rtol, --check-rtol and --timing-rtol must be >= 0; got {rtol}, {check_rtol} and {timing_rtol}")
    if jobs < 1:
        _fail(f"--jobs must be an integer >= 1; got {jobs}")
    if not reference.is_dir():
        _fail(f"--reference {reference} is not a folder of reference runs (REFERENCE/SLUG/result.json)")
    refs = {d.name: d / "result.json" for d in sorted(reference.iterdir()) if (d / "result.json").exists()}
    if "all" in slugs and slugs != ["all"]:
        _fail("'all' verifies every paper with a reference run: give either 'all' or a list of slugs, not both")
    chosen = [s for s in refs if s in experiments()] if slugs == ["all"] else slugs
    lacking = [s for s in chosen if s not in refs]
    if lacking:
        _fail(f"no reference run for {', '.join(lacking)} under {reference}; have: {', '.join(refs) or '(none)'}")
    unknown = [s for s in chosen if s not in experiments()]
    if unknown:
        _fail(f"unknown slug(s) {', '.join(unknown)}; known: {', '.join(experiments())}")
    ref = {s: load_result(refs[s].parent) for s in chosen}  # each reference read once (they hold every record)
    wrong = [f"{s} ({ref[s]['preset']})" for s in chosen if ref[s]["preset"] != preset]
    if wrong:
        _fail(f"the reference runs of {', '.join(wrong)} are not {preset!r} runs: pass --preset to match")
    _check_out(out)
    missing = unavailable()
    if any(s in missing for s in chosen):
        _fail("; ".join(f"{s}: {missing[s]}" for s in chosen if s in missing))

    from rich.table import Table

    from .core.registry import get
    from .core.runner import run_experiment
    from .core.seeding import set_threads

    set_threads()
    moved = []
    for k, slug in enumerate(chosen, 1):
        err.print(
            f"[bold]{slug}[/bold] ({preset}, paper {k}/{len(chosen)}): verifying against {refs[slug]}", highlight=False
        )
        try:
            run_dir = run_experiment(
                slug,
                preset=preset,
                out=out,
                show_progress=True,
                jobs=jobs,
                seeds=ref[slug]["seeds"],
            )
        except KeyboardInterrupt:
            _interrupted()
        diffs = compare(
            ref[slug],
            load_result(run_dir),
            rtol=rtol,
            check_rtol=check_rtol,
            timing_statements=get(slug).timing_statements,
            timing_rtol=timing_rtol,
        )
        moved += [{"paper": slug, **d} for d in diffs]
        err.print(f"  {'reproduces' if not diffs else f'{len(diffs)} difference(s)'} ({run_dir})", highlight=False)
        for e in knife_edges(
            load_result(run_dir),
            rtol=rtol,
            timing_statements=get(slug).timing_statements,
            timing_rtol=timing_rtol,
            check_rtol=check_rtol,
        ):
            err.print(
                f"  KNIFE EDGE [{e['kind']}] {e['id']} ({e['verdict']}): {e['statistic']} {e['value']:.4g} vs bound "
                f"{e['bound']:.4g}, within the {e['tolerance']} tolerance: another CPU may flip it",
                highlight=False,
                markup=False,  # "[claim]" is text, not a rich style tag
            )
    if not moved:
        typer.echo(f"verified: {len(chosen)} paper(s) reproduce the reference verdicts and numbers")
        return
    table = Table("paper", "id", "kind", "what", "reference", "now", "tolerance", title="moved beyond tolerance")
    for d in moved:
        table.add_row(
            *(
                f"{d[c]:.4g}" if isinstance(d[c], float) else str(d[c])
                for c in ("paper", "id", "kind", "what", "reference", "now", "tolerance")
            )
        )
    Console(width=160).print(table)
    raise typer.Exit(code=1)


def _parse_seeds(text: str | None) -> int | list[int] | None:
    if text is None:
        return None
    try:
        vals = [int(x) for x in text.split(",")]
    except ValueError:
        _fail(f"--seeds must be a number >= 1 or a comma-separated list of seeds such as 3,7,11; got {text!r}")
    if "," not in text:
        if vals[0] < 1:
            _fail(f"--seeds must be an integer >= 1; got {vals[0]}")
        return vals[0]
    if any(v < 0 for v in vals) or len(set(vals)) != len(vals):
        _fail(f"--seeds lists distinct non-negative seeds; got {text!r}")
    return vals


def _overrides(slug: str, preset: str, pairs: list[str] | None) -> dict | None:
    """``--set key=value`` checked against the preset's config dataclass: unknown keys and bad types fail clearly."""
    if not pairs:
        return None
    import ast
    import dataclasses

    from .core.registry import get

    config = get(slug).presets[preset]
    fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    out = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or key not in fields:
            _fail(f"--set {pair!r}: expected key=value with key one of {', '.join(fields)}")
        current = fields[key]
        try:
            value = raw if isinstance(current, str) else ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            _fail(f"--set {key}: {raw!r} is not a valid {type(current).__name__}")
        if isinstance(current, tuple) and isinstance(value, list):
            value = tuple(value)
        if isinstance(current, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if current is not None and type(value) is not type(current):
            _fail(f"--set {key}: expected a {type(current).__name__} (like {current!r}), got {raw!r}")
        out[key] = value
    return out


def _summary(dirs: list[Path]) -> list[str]:
    failing = []
    for d in dirs:
        r = load_result(d)
        err.print(f"[bold]{r['slug']}[/bold] {r['wall_time_s']:.1f} s — {summary_line(_counts_of(r))}", highlight=False)
        for c in r["claims"]:
            kind = c.get("kind", "claim")
            reason = f" ({c['reason']})" if c.get("reason") else ""
            reason += " (uncontrolled)" if _uncontrolled(c) else ""
            reason += " KNIFE EDGE" if c.get("test", {}).get("knife_edge") else ""
            err.print(
                f"  {_MARK.get(c['verdict'], '?')} [{kind}] {c['id']}: {c['verdict']}{reason} — {c['statement']}",
                highlight=False,
                markup=False,
            )
            if kind == "check" and c["verdict"] != "holds":
                failing.append(f"{r['slug']}:{c['id']}")
    return failing


@app.command()
def report(
    out: Annotated[Path, typer.Option(help="Folder holding the runs; REPORT.md is written here.")] = Path("runs"),
    format: Annotated[str, typer.Option("--format", help="md (REPORT.md + overview figure), csv or json.")] = "md",
    reference: Annotated[
        Path | None, typer.Option(help="Read the shipped reference runs (a results/ folder: results/SLUG/) instead.")
    ] = None,
) -> None:
    """Gather every paper's latest full run (else its latest quick run) into OUT/REPORT.md, claim table first.

    ``--format csv|json`` writes the cross-paper statement table (OUT/claims.csv, OUT/claims.json) instead.
    """
    if format not in ("md", "csv", "json"):
        _fail(f"--format must be one of md, csv, json; got {format!r}")
    if reference is not None:
        latest = reference_results(reference)
        if not latest:
            _fail(f"no reference runs (SLUG/result.json) under {reference}")
        out.mkdir(parents=True, exist_ok=True)
    else:
        latest = latest_results(out)
    if not latest:
        _fail(f"no runs found under {out}; run `icml26 run all` first")
    if format != "md":
        print(_export(out, latest, format))
        return
    _overview_figure(out, latest)
    lines = [
        "# icml26 reproduction report\n",
        "Claims without a control arm (or a closed-form truth) are counted apart as *uncontrolled*; a control"
        " rejects when the arm without the credited mechanism fails the claim's rule.\n",
        "| paper | preset | claims hold | uncontrolled claims hold | controls reject | checks pass |"
        " preconditions hold |",
        "|---|---|---|---|---|---|---|",
    ]
    for slug, r in latest.items():
        k = _counts_of(r)
        kinds = ("claim", "uncontrolled", "control", "check", "precondition")
        cells = [f"{k[kind]['holds']}/{sum(k[kind].values())}" for kind in kinds]
        lines.append(f"| {slug} | {_preset_label(r)} | " + " | ".join(cells) + " |")
    lines += [
        "\n## Claims\n",
        "| paper | preset | kind | claim | verdict | statement |",
        "|---|---|---|---|---|---|",
    ]
    order = {"precondition": 0, "claim": 1, "control": 2, "check": 3}
    for slug, r in latest.items():
        for c in sorted(r["claims"], key=lambda c: order[c.get("kind", "claim")]):
            verdict = c["verdict"] + (f" ({c['reason']})" if c.get("reason") else "")
            verdict += " (uncontrolled)" if _uncontrolled(c) else ""
            verdict += " KNIFE EDGE" if c.get("test", {}).get("knife_edge") else ""
            lines.append(
                f"| {slug} | {r['preset']} | {c.get('kind', 'claim')} | {c['id']} | {verdict} | {c['statement']} |"
            )
    not_run = [s for s in experiments() if s not in latest]
    if not_run:
        lines.append(f"\nNot run yet: {', '.join(not_run)}")
    for r in latest.values():
        rel = Path(os.path.relpath(r["dir"], out))
        body = (r["dir"] / "report.md").read_text()
        body = re.sub(r"^(#+) ", r"#\1 ", body, flags=re.M)  # demote headings one level
        body = body.replace("](./", f"]({rel.as_posix()}/")
        lines.append(f"\n{body}")
    lines.insert(1, "![statements by verdict per paper](overview.png)\n")
    path = out / "REPORT.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    print(path)


_COLUMNS = ("paper", "preset", "kind", "id", "verdict", "reason", "requires", "controls", "statement")


def _statement_rows(latest: dict) -> list[dict]:
    return [
        {
            "paper": slug,
            "preset": r["preset"],
            "kind": c.get("kind", "claim"),
            "id": c["id"],
            "verdict": c["verdict"],
            "reason": c.get("reason", ""),
            "requires": ";".join(c.get("requires", [])),
            "controls": ";".join(c.get("controls", [])) or (f"none: {c['no_control']}" if c.get("no_control") else ""),
            "statement": c["statement"],
        }
        for slug, r in latest.items()
        for c in r["claims"]
    ]


def _export(out: Path, latest: dict, fmt: str) -> Path:
    """The statement table across papers as OUT/claims.csv or OUT/claims.json."""
    import csv
    import io
    import json

    rows = _statement_rows(latest)
    if fmt == "json":
        text = json.dumps(rows, indent=1)
    else:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
        text = buf.getvalue()
    path = out / f"claims.{fmt}"
    atomic_write_text(path, text)
    return path


def _overview_figure(out: Path, latest: dict) -> None:
    """OUT/overview.png: per paper, its claims, checks and preconditions stacked by verdict."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from .core.io import atomic_write_bytes

    slugs = list(latest)
    colors = {"holds": "#4c9a2a", "inconclusive": "#c9a227", "does not hold": "#b22222"}
    fig = Figure(figsize=(max(6, 0.9 * len(slugs) + 2), 4.2))
    ax = fig.subplots()
    width = 0.2
    kinds = ("precondition", "claim", "uncontrolled", "check")
    for j, kind in enumerate(kinds):
        bottom = [0] * len(slugs)
        for verdict, color in colors.items():
            h = [_counts_of(latest[s])[kind][verdict] for s in slugs]
            xs = [i + (j - 1.5) * width for i in range(len(slugs))]
            ax.bar(
                xs,
                h,
                width * 0.95,
                bottom=bottom,
                color=color,
                edgecolor="k",
                linewidth=0.3,
                label=verdict if j == 1 else None,
                hatch={"precondition": "//", "uncontrolled": "xx", "check": ".."}.get(kind, ""),
            )
            bottom = [b + x for b, x in zip(bottom, h)]
    ax.set_xticks(range(len(slugs)), slugs, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("number of statements")
    ax.set_title("Statements by verdict per paper (bars: preconditions //, claims, uncontrolled claims xx, checks ..)")
    ax.legend(fontsize=8, title="verdict")
    ax.grid(axis="y", alpha=0.3)
    import io as _io

    buf = _io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    atomic_write_bytes(out / "overview.png", buf.getvalue())


def main() -> None:  # console-script entry point
    app()


if __name__ == "__main__":
    main()
