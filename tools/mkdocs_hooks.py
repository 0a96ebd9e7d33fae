"""mkdocs hooks: publish the committed reference runs (results/SLUG/) beside the paper pages.

docs/SLUG.md link to ``../results/SLUG/...`` so that they read right on a repository browser; on the site the
run folders are copied to ``results/SLUG/`` and each paper page gets its reference figures appended, so one
page holds the idea, the numbers and the pictures.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def _papers() -> list[str]:
    """Built papers that have a docs page, in manifest order."""
    import sys

    sys.path.insert(0, str(ROOT / "src"))
    from icml26.manifest import PAPERS

    return [p["slug"] for p in PAPERS if (ROOT / "docs" / f"{p['slug']}.md").exists()]


def on_config(config):
    for section in config["nav"]:
        if isinstance(section, dict) and "Papers" in section:
            section["Papers"] = [{slug: f"{slug}.md"} for slug in _papers()]
    return config


def on_files(files, config):
    api = "# Paper APIs\n\nEach paper's public surface (its `__init__`), generated from the docstrings.\n\n"
    api += "\n\n".join(
        f"## `icml26.{slug}`\n\n::: icml26.{slug}\n    options:\n      show_root_heading: false\n" for slug in _papers()
    )
    files.append(File.generated(config, "api/papers.md", content=api))
    for path in sorted(RESULTS.glob("*/*")):
        if path.suffix in (".png", ".md"):  # result.json (every per-seed record) stays in the repository
            files.append(File.generated(config, f"results/{path.parent.name}/{path.name}", abs_src_path=str(path)))
    return files


def on_page_markdown(markdown, page, config, files):
    slug = Path(page.file.src_uri).stem
    if page.file.src_uri.startswith("results/"):
        return markdown
    # ../results/SLUG/ (a folder) -> its report page; ../results/SLUG/x.png -> the copy on the site
    markdown = re.sub(r"\]\(\.\./results/([a-z0-9_]+)/\)", r"](results/\1/report.md)", markdown)
    markdown = markdown.replace("](../results/", "](results/")
    figures = sorted((RESULTS / slug).glob("*.png")) if (RESULTS / slug).is_dir() else []
    if figures:
        markdown += f"\n\n## Reference figures (full preset, `results/{slug}/`)\n\n"
        markdown += "\n\n".join(f"![{p.stem}](results/{slug}/{p.name})" for p in figures) + "\n"
    return markdown
