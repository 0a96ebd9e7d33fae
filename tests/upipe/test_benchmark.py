"""The GPU benchmark's machinery on gloo CPU ranks: seeding, equality column, formula columns, OOM rows."""

import pytest

from icml26.upipe.benchmark import BenchSpec, markdown_table, run_benchmark

SPEC = BenchSpec(dim=64, heads=8, kv_heads=2, head_dim=8, dtype="float32", repeats=1, samples=512, device="cpu")


def test_rows_equality_and_a_collective_oom_row():
    rows = run_benchmark(
        [256], ["ulysses", "upipe", "ring"], 2, SPEC, backend="gloo", timeout_s=300, inject_oom=("ring", 256, 1),
        progress=None,
    )  # fmt: skip
    by = {r["method"]: r for r in rows}
    assert set(by) == {"ulysses", "upipe", "ring"}
    # the same seeded weights and input on every rank: UPipe's output and input gradient equal Ulysses's
    assert by["upipe"]["max_dy_vs_ulysses"] < 1e-5 and by["upipe"]["max_ddx_vs_ulysses"] < 1e-5
    assert by["upipe"]["fwd_peak/ulysses"] < 0.8
    for m in ("ulysses", "upipe"):  # live bytes agree with the analytic formula on CPU
        assert abs(by[m]["fwd_peak"] / by[m]["fwd_formula"] - 1) < 0.1
    # one rank's (synthetic) OOM is a row, and its peer did not wait for the 300 s collective timeout
    assert by["ring"]["note"] == "OOM" and by["ring"]["wall_s"] < 60
    assert "OOM" in markdown_table(rows)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="methods"):
        run_benchmark([256], ["flash"], 2, SPEC, backend="gloo")
    with pytest.raises(ValueError, match="multiple of world"):
        run_benchmark([255], ["upipe"], 2, SPEC, backend="gloo")
    with pytest.raises(ValueError, match="dtype"):
        BenchSpec(dtype="int8")
    with pytest.raises(ValueError, match="world"):
        run_benchmark([256], ["upipe"], 0, SPEC, backend="gloo")
    with pytest.raises(ValueError, match="num_heads"):  # refused in the parent, before any rank is spawned
        run_benchmark([252], ["ulysses"], 3, SPEC, backend="gloo")
