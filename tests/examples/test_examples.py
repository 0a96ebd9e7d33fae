"""Every script in examples/ runs to completion and prints what its docstring promises.

Each script runs in a fresh subprocess (one thread, no network), as a user would run it; the assertions parse
its printed numbers, so a script that runs but shows the wrong thing fails.
"""

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch.distributed

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _env() -> dict[str, str]:
    env = dict(
        os.environ,
        ICML26_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        MPLBACKEND="Agg",
    )
    src = str(ROOT / "src")  # the source tree first, so the test exercises this checkout
    env["PYTHONPATH"] = src + os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else src
    return env


GLOO_TEARDOWN = "terminate called without an active exception"  # gloo's abort at exit, after the work is done


def _run(args: list[str], timeout: float = 120, retry_teardown: bool = False) -> str:
    """Run a script and return its stdout.  ``retry_teardown``: a torchrun job whose rank aborted with gloo's teardown
    message (CI saw it twice under load, after every number had printed and the ranks had met at a barrier before
    ``destroy_process_group``) is run once more; any other failure, or the same one twice, fails the test."""
    for _ in range(2 if retry_teardown else 1):
        proc = subprocess.run(args, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout)
        if proc.returncode == 0 or GLOO_TEARDOWN not in proc.stderr:
            break
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"
    return proc.stdout


def _script(name: str) -> str:
    return _run([sys.executable, str(EXAMPLES / name)])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_opacus_slaclip():
    pytest.importorskip("opacus")
    out = _script("opacus_slaclip.py")
    rows = re.findall(r"^(\w+)\s+accuracy=([\d.]+) clip: ([\d.]+) -> ([\d.]+) epsilon=([\d.]+)", out, re.M)
    assert [r[0] for r in rows] == ["vanilla", "vanilla", "slaclip"], out
    (_, acc_bad, _, clip_bad, eps0), (_, acc_good, _, _, eps1), (_, acc_sla, c0, clip_sla, eps2) = rows
    assert eps0 == eps1 == eps2, out  # SlaClip spends exactly vanilla DP-SGD's privacy budget
    assert float(clip_bad) == float(c0) == 0.01, out  # vanilla keeps the poor threshold ...
    assert float(clip_sla) > 0.1, out  # ... SlaClip's threshold moved away from it
    assert float(acc_sla) > float(acc_bad) + 0.3 and float(acc_sla) > 0.8, out
    assert float(acc_good) > 0.8, out


def test_hf_generate_t3():
    pytest.importorskip("transformers")
    out = _script("hf_generate_t3.py")
    counts = {
        m[0]: tuple(map(int, m[1:]))
        for m in re.findall(r"^(base|T3):\s+forget reproduced (\d+)/(\d+), retain reproduced (\d+)/(\d+)", out, re.M)
    }
    assert set(counts) == {"base", "T3"}, out
    bf, nf, br, nr = counts["base"]
    tf, _, tr, _ = counts["T3"]
    assert bf == nf and br == nr, out  # the base model memorised every fact
    assert tf == 0, out  # T3 suppresses every forget answer ...
    assert tr >= nr - 2, out  # ... and keeps (almost) every retain answer


def test_sklearn_acute():
    out = _script("sklearn_acute.py")
    table = {
        m[0]: tuple(map(float, m[1:]))
        for m in re.findall(r"^(raw|platt|acute)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", out, re.M)
    }
    assert set(table) == {"raw", "platt", "acute"}, out
    (raw_sm, raw_bin, raw_auc), (ac_sm, ac_bin, ac_auc) = table["raw"], table["acute"]
    assert ac_sm < 0.5 * raw_sm and ac_bin < 0.5 * raw_bin, out  # ECE before -> after
    assert ac_sm < 0.06, out
    assert ac_auc > raw_auc, out


@pytest.mark.skipif(not torch.distributed.is_available(), reason="this torch build has no torch.distributed")
def test_torchrun_upipe():
    out = _run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node=2",
            "--master_port",
            str(_free_port()),
            str(EXAMPLES / "torchrun_upipe.py"),
        ],
        timeout=180,
        retry_teardown=True,
    )
    err = {m[:2]: float(m[2]) for m in re.findall(r"^max \|upipe - (\w+)\| (output|grad):\s+([-+.\deE]+)$", out, re.M)}
    assert len(err) == 4, out
    assert all(e < 1e-4 for e in err.values()), out  # float32 round-off, nothing more
    ratio = float(re.search(r"forward peak bytes per rank: upipe \d+, ulysses \d+ \(([\d.]+)x\)", out)[1])
    assert ratio < 1.0, out  # UPipe holds fewer attention intermediates than Ulysses


@pytest.mark.skipif(not torch.distributed.is_available(), reason="this torch build has no torch.distributed")
def test_torchrun_hf_upipe():
    pytest.importorskip("transformers")
    out = _run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node=2",
            "--master_port",
            str(_free_port()),
            str(EXAMPLES / "torchrun_hf_upipe.py"),
        ],
        timeout=240,
        retry_teardown=True,
    )
    up, ref = map(float, re.search(r"step 0 loss: upipe ([\d.]+), sdpa on one process ([\d.]+)", out).groups())
    assert abs(up - ref) < 1e-5, out
    assert float(re.search(r"max \|grad upipe - grad sdpa\|: ([-+.\deE]+)", out)[1]) < 1e-5, out
    losses = [float(v) for v in re.findall(r"^step \d+ loss ([\d.]+)$", out, re.M)]
    assert len(losses) == 5 and losses[-1] < losses[0], out  # it trains
