"""Command line: ``icml26 list | run SLUG... | report``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .core import experiments, unavailable
from .core.io import atomic_write_text
from .core.registry import PRESETS
from .core.runner import latest_results, run_experiment

app = typer.Typer(add_completion=False, no_args_is_help=True, help="ICML 2026 methods and their reproductions.")
err = Console(stderr=True)

_MARK = {"holds": "✓", "does not hold": "✗", "inconclusive": "?"}


def _fail(msg: str) -> None:
    err.print(f"[red]error:[/red] {msg}", highlight=False)
    raise typer.Exit(code=2)


@app.command("list")
def list_(out: Annotated[Path, typer.Option(help="Folder holding earlier runs.")] = Path("runs")) -> None:
    """Every registered paper, one line each, with the verdicts of its latest run."""
    latest = latest_results(out)
    for slug, exp in experiments().items():
        r = latest.get(slug)
        if r is None:
            verdicts = "not run yet"
        else:
            verdicts = f"[{r['preset']}] " + " ".join(f"{c['id']}{_MARK.get(c['verdict'], '?')}" for c in r["claims"])
        typer.echo(f"{slug:<20} {exp.title[:60]:<60} {verdicts}")
        if exp.component:
            typer.echo(f"{'':<20} you get: {exp.component}")
    for slug, why in unavailable().items():
        typer.echo(f"{slug:<20} unavailable: {why}")


@app.command()
def run(
    slugs: Annotated[list[str], typer.Argument(help="Paper slugs, or 'all'.")],
    preset: Annotated[str, typer.Option(help="quick (< 60 s each) or full.")] = "quick",
    seeds: Annotated[int | None, typer.Option(help="Number of seeds (default: the preset's).")] = None,
    out: Annotated[Path, typer.Option(help="Folder for run folders.")] = Path("runs"),
) -> None:
    """Run reproductions; write OUT/SLUG/<UTC timestamp>/ and print its path last."""
    exps = experiments()
    if preset not in PRESETS:
        _fail(f"--preset must be one of {', '.join(PRESETS)}; got {preset!r}")
    if seeds is not None and seeds < 1:
        _fail(f"--seeds must be an integer >= 1; got {seeds}")
    chosen = list(exps) if slugs == ["all"] else slugs
    unknown = [s for s in chosen if s not in exps]
    if unknown:
        why = "".join(f"\n  {s}: {unavailable()[s]}" for s in unknown if s in unavailable())
        _fail(f"unknown slug(s) {', '.join(unknown)}; known: {', '.join(exps) or '(none)'}, or 'all'{why}")
    from .core.seeding import set_threads

    set_threads()
    dirs = []
    for slug in chosen:
        err.print(f"[bold]{slug}[/bold] ({preset})", highlight=False)
        run_dir = run_experiment(slug, preset=preset, seeds=seeds, out=out, show_progress=True)
        dirs.append(run_dir)
    _summary(dirs)
    for d in dirs:
        print(d)


def _summary(dirs: list[Path]) -> None:
    from .core.io import load_result

    for d in dirs:
        r = load_result(d)
        err.print(f"[bold]{r['slug']}[/bold] {r['wall_time_s']:.1f} s", highlight=False)
        for c in r["claims"]:
            err.print(
                f"  {_MARK.get(c['verdict'], '?')} {c['id']}: {c['verdict']} — {c['statement']}",
                highlight=False,
                markup=False,
            )


@app.command()
def report(
    out: Annotated[Path, typer.Option(help="Folder holding the runs; REPORT.md is written here.")] = Path("runs"),
) -> None:
    """Gather the latest run of every paper into OUT/REPORT.md (claim table first)."""
    latest = latest_results(out)
    if not latest:
        _fail(f"no runs found under {out}; run `icml26 run all` first")
    lines = [
        "# icml26 reproduction report\n",
        "## Claims\n",
        "| paper | preset | claim | verdict | statement |",
        "|---|---|---|---|---|",
    ]
    for slug, r in latest.items():
        for c in r["claims"]:
            lines.append(f"| {slug} | {r['preset']} | {c['id']} | {c['verdict']} | {c['statement']} |")
    not_run = [s for s in experiments() if s not in latest]
    if not_run:
        lines.append(f"\nNot run yet: {', '.join(not_run)}")
    for r in latest.values():
        rel = r["dir"].relative_to(out)
        body = (r["dir"] / "report.md").read_text()
        body = re.sub(r"^(#+) ", r"#\1 ", body, flags=re.M)  # demote headings one level
        body = body.replace("](./", f"]({rel.as_posix()}/")
        lines.append(f"\n{body}")
    path = out / "REPORT.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    print(path)


def main() -> None:  # console-script entry point
    app()


if __name__ == "__main__":
    main()
