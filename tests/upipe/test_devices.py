"""Kernel choice by device, and the CUDA kernels' call signatures (checked on meta tensors, no GPU needed)."""

import pytest
import torch

from icml26.upipe import _kernel
from icml26.upipe._kernel import NAMES, _select, kernel_name


def test_cpu_uses_the_cpu_flash_kernel():
    assert kernel_name("cpu") == (NAMES["cpu_flash"] if _kernel.FLASH_CPU_AVAILABLE else NAMES["blockwise"])


@pytest.mark.parametrize(
    "dtype, head_dim, capability, expected",
    [
        (torch.bfloat16, 128, (9, 0), "cuda_flash"),
        (torch.float16, 64, (8, 0), "cuda_flash"),
        (torch.bfloat16, 128, (7, 5), "cuda_efficient"),  # flash-attention 2 needs sm80+
        (torch.float32, 128, (9, 0), "cuda_efficient"),  # flash has no fp32 kernel
        (torch.bfloat16, 512, (9, 0), "cuda_efficient"),  # head dim above flash's 256
        (torch.float32, 12, (9, 0), "blockwise"),  # head dim not a multiple of 8
        (torch.float64, 64, (9, 0), "blockwise"),
    ],
)
def test_cuda_choice_by_dtype_head_dim_and_capability(monkeypatch, dtype, head_dim, capability, expected):
    monkeypatch.setattr(_kernel, "_capability", lambda device: capability)
    assert _select("cuda", dtype, head_dim) == expected
    assert kernel_name("cuda:0", dtype, head_dim) == NAMES[expected]


def test_sdp_switches_are_honoured(monkeypatch):
    monkeypatch.setattr(_kernel, "_capability", lambda device: (9, 0))
    monkeypatch.setattr(torch.backends.cuda, "flash_sdp_enabled", lambda: False)
    assert _select("cuda", torch.bfloat16, 128) == "cuda_efficient"
    monkeypatch.setattr(torch.backends.cuda, "mem_efficient_sdp_enabled", lambda: False)
    assert _select("cuda", torch.bfloat16, 128) == "blockwise"


def test_other_devices_fall_back_to_blockwise():
    assert _select("meta", torch.float32, 64) == "blockwise"


@pytest.mark.parametrize("kind, dtype", [("cuda_flash", torch.bfloat16), ("cuda_efficient", torch.float32)])
@pytest.mark.parametrize("causal", [True, False])
def test_cuda_kernels_keep_the_kernel_contract_on_meta_tensors(kind, dtype, causal):
    """Shapes and dtypes of (out, lse) and of the gradients, through the real aten schemas (meta kernels).

    S = 100 is not a multiple of 32, so the memory-efficient kernel's padded log-sum-exp is sliced to S rows
    and padded back for its backward."""
    forward, backward = _kernel._KERNELS[kind]
    b, h, s, d = 2, 4, 100, 64
    q, k, v = (torch.empty(b, h, s, d, device="meta", dtype=dtype) for _ in range(3))
    out, lse = forward(q, k, v, causal)
    assert out.shape == (b, h, s, d) and out.dtype == dtype
    assert lse.shape == (b, h, s) and lse.dtype == torch.float32
    dq, dk, dv = backward(torch.empty_like(out), q, k, v, out, lse, causal)
    assert dq.shape == dk.shape == dv.shape == (b, h, s, d)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cuda_kernel_matches_blockwise(dtype):  # pragma: no cover - runs on GPU machines only
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 4, 200, 64, device="cuda", dtype=dtype) for _ in range(3))
    out, lse = _kernel.attention_forward(q, k, v, True)
    ref_out, ref_lse = _kernel._blockwise_forward(q.double(), k.double(), v.double(), True)
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    assert torch.allclose(out.double(), ref_out, atol=tol) and torch.allclose(lse.double(), ref_lse, atol=tol)
    do = torch.randn_like(out)
    grads = _kernel.attention_backward(do, q, k, v, out, lse, True)
    ref = _kernel._blockwise_backward(do.double(), q.double(), k.double(), v.double(), ref_out, ref_lse, True)
    for g, r in zip(grads, ref):
        assert torch.allclose(g.double(), r, atol=10 * tol)
