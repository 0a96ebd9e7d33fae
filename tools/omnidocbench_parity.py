"""Run the official OmniDocBench end-to-end evaluation on our constructed fixture pages and store its numbers.

This script is not part of the library and is not run by the tests.  It imports the official evaluation code from a
checkout of https://github.com/opendatalab/OmniDocBench (nothing of that code is copied here) and writes the numbers
it produces into ``tests/ovisocr/data/omnidocbench_expected.json``, which the parity tests compare against.

Usage (with the official code checked out at ``OMNIDOC`` and its dependencies installed in the running Python)::

    python tools/omnidocbench_parity.py --omnidoc /tmp/omnidoc --commit 7bd6c2e... \\
        --gt tests/ovisocr/data/omnidocbench_fixture_gt.json --pred tests/ovisocr/data/omnidocbench_fixture_pred.json \\
        --out tests/ovisocr/data/omnidocbench_expected.json

The official package imports modules that the end-to-end Edit_dist / TEDS path never calls (``mmeval``,
``skimage.measure``, Hugging Face ``evaluate``); put empty stand-ins for them on ``PYTHONPATH`` if they are not
installed.  The run uses the official ``configs/end2end.yaml`` metrics without CDM (which needs a LaTeX toolchain).

Per page, the numbers come from a run on that page alone; the overall and per-attribute numbers from one run on all
pages.  ``Overall`` is the formula of the official ``tools/generate_result_tables.ipynb``,
``((1 - TextEdit) * 100 + TEDS_page * 100 + formula) / 3``, with ``formula = (1 - FormulaEdit) * 100`` in place of
CDM, a category without samples counting 0 (as the notebook does for TEDS and CDM), and without the notebook's
rounding of each component to 3 decimals.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import shutil
import sys
import tempfile

METRICS = {
    "text_block": {"metric": ["Edit_dist"]},
    "display_formula": {"metric": ["Edit_dist"]},
    "table": {"metric": ["TEDS", "Edit_dist"]},
    "reading_order": {"metric": ["Edit_dist"]},
}


def _num(x):
    if isinstance(x, str) or x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _overall(text, teds_page, formula):
    if text is None:
        return None
    return ((1 - text) * 100 + (teds_page or 0.0) * 100 + ((1 - formula) * 100 if formula is not None else 0.0)) / 3


def run_official(omnidoc: str, gt_pages: list, preds: dict, work: str) -> dict:
    """One official end-to-end run; returns the official result JSON plus per-page and per-table numbers."""
    from dataset.end2end_dataset import End2EndDataset
    from task.end2end_run_eval import End2EndEval

    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(os.path.join(work, "pred"))
    os.makedirs(os.path.join(work, "result"))
    gt_path = os.path.join(work, "gt.json")
    with open(gt_path, "w", encoding="utf-8") as f:
        json.dump(gt_pages, f, ensure_ascii=False)
    for page in gt_pages:
        name = os.path.basename(page["page_info"]["image_path"])
        with open(os.path.join(work, "pred", name[:-4] + ".md"), "w", encoding="utf-8") as f:
            f.write(preds[name])
    cfg = {
        "metrics": METRICS,
        "dataset": {
            "dataset_name": "end2end_dataset",
            "ground_truth": {"data_path": gt_path},
            "prediction": {"data_path": os.path.join(work, "pred")},
            "match_method": "quick_match",
        },
    }
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            ds = End2EndDataset(cfg)
            End2EndEval(ds, METRICS, gt_path, "run")
        with open("result/run_metric_result.json", encoding="utf-8") as f:
            res = json.load(f)
        per_page = {}
        for element in ("text_block", "display_formula", "reading_order"):
            p = f"result/run_{element}_per_page_edit.json"
            per_page[element] = json.load(open(p, encoding="utf-8")) if os.path.exists(p) else {}
        tables = json.load(open("result/run_table_result.json", encoding="utf-8"))
    finally:
        os.chdir(cwd)
    return {"result": res, "per_page": per_page, "tables": tables}


def summarise(run: dict) -> dict:
    res = run["result"]

    def edit(el):
        return _num(res[el]["all"].get("Edit_dist", {}).get("ALL_page_avg")) if res[el]["all"] else None

    def page_all(el, metric):
        return _num(res[el]["page"].get(metric, {}).get("ALL")) if res[el]["page"] else None

    out = {
        "TextEdit": edit("text_block"),
        "FormulaEdit": edit("display_formula"),
        "TEDS": page_all("table", "TEDS"),
        "TEDS-S": page_all("table", "TEDS_structure_only"),
        "TEDS_all_tables": _num(res["table"]["all"].get("TEDS", {}).get("all")) if res["table"]["all"] else None,
        "TEDS-S_all_tables": _num(res["table"]["all"].get("TEDS_structure_only", {}).get("all"))
        if res["table"]["all"]
        else None,
        "ReadingOrder": edit("reading_order"),
    }
    out["Overall"] = _overall(out["TextEdit"], out["TEDS"], out["FormulaEdit"])
    by_attr: dict = {}
    for el, metric, key in (
        ("text_block", "Edit_dist", "TextEdit"),
        ("display_formula", "Edit_dist", "FormulaEdit"),
        ("table", "TEDS", "TEDS"),
        ("table", "TEDS_structure_only", "TEDS-S"),
        ("reading_order", "Edit_dist", "ReadingOrder"),
    ):
        for attr, v in (res[el]["page"].get(metric, {}) if res[el]["page"] else {}).items():
            by_attr.setdefault(attr, {})[key] = _num(v)
    out["by_page_attribute"] = by_attr
    by_el: dict = {}
    for el, metric, key in (
        ("text_block", "Edit_dist", "TextEdit"),
        ("display_formula", "Edit_dist", "FormulaEdit"),
        ("table", "TEDS", "TEDS"),
        ("table", "TEDS_structure_only", "TEDS-S"),
    ):
        for attr, v in (res[el]["group"].get(metric, {}) if res[el]["group"] else {}).items():
            by_el.setdefault(attr, {})[key] = _num(v)
    out["by_element_attribute"] = by_el
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--omnidoc", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--gt", required=True)
    ap.add_argument("--pred", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    gt = json.load(open(a.gt, encoding="utf-8"))
    preds = json.load(open(a.pred, encoding="utf-8"))
    omnidoc = os.path.abspath(a.omnidoc)
    sys.path.insert(0, omnidoc)
    work = tempfile.mkdtemp(prefix="omnidoc_run_")
    pages = {}
    for page in gt:
        name = os.path.basename(page["page_info"]["image_path"])
        run = run_official(omnidoc, [page], preds, os.path.join(work, "one"))
        s = summarise(run)
        pages[name] = {k: s[k] for k in ("TextEdit", "FormulaEdit", "TEDS", "TEDS-S", "ReadingOrder", "Overall")}
        pages[name]["tables"] = [
            {"TEDS": t["metric"]["TEDS"], "TEDS-S": t["metric"]["TEDS_structure_only"]} for t in run["tables"]
        ]
    full = run_official(omnidoc, gt, preds, os.path.join(work, "all"))
    overall = summarise(full)
    per_page_in_full = {el: full["per_page"][el] for el in full["per_page"]}
    import Levenshtein
    import pylatexenc

    out = {
        "official": {
            "repository": "https://github.com/opendatalab/OmniDocBench",
            "commit": a.commit,
            "config": "configs/end2end.yaml metrics without CDM, match_method quick_match",
            "python": sys.version.split()[0],
            "pylatexenc": getattr(pylatexenc, "__version__", "?"),
            "Levenshtein": Levenshtein.__version__,
        },
        "pages": pages,
        "overall": overall,
        "per_page_in_full_run": per_page_in_full,
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
