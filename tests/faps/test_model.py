import pytest
import torch

from icml26.faps import TinyDiT, patchify


def _model():
    torch.manual_seed(0)
    m = TinyDiT(img_size=8, patch_size=2, in_ch=1, width=16, depth=2, heads=2)
    for p in m.parameters():  # leave the adaLN-Zero start so the blocks are not the identity
        torch.nn.init.normal_(p, std=0.2)
    return m.eval()


def test_kept_tokens_equal_full_forward_for_identity_and_permutations():
    m = _model()
    x = torch.randn(3, 1, 8, 8)
    t = torch.tensor([5, 500, 999])
    y = torch.tensor([1, 2, 10])
    full = patchify(m(x, t, y), 2)
    ident = torch.arange(16).expand(3, -1)
    assert torch.allclose(m(x, t, y, ident), full, atol=1e-5)
    perm = torch.stack([torch.randperm(16, generator=torch.Generator().manual_seed(i)) for i in range(3)])
    assert torch.allclose(m(x, t, y, perm), full.gather(1, perm[..., None].expand(-1, -1, 4)), atol=1e-5)


def test_subset_forward_has_token_shape_and_flop_proxy_scales_with_keep_ratio():
    m = _model()
    seen = []
    m.blocks[0].register_forward_hook(lambda mod, inp, out: seen.append(inp[0].shape[1]))
    x = torch.randn(2, 1, 8, 8)
    for k in (4, 8, 16):
        out = m(x, torch.tensor([1, 2]), None, torch.arange(k).expand(2, -1))
        assert out.shape == (2, k, 4)
    assert seen == [4, 8, 16]  # tokens through the transformer = keep_ratio * N


def test_unselected_patches_get_zero_gradient():
    m = _model().train()
    x = torch.randn(2, 1, 8, 8, requires_grad=True)
    keep = torch.tensor([[0, 5, 9], [3, 4, 15]])
    out = m(x, torch.tensor([10, 20]), torch.tensor([0, 1]), keep)
    ((out - 1.0) ** 2).mean().backward()
    g = patchify(x.grad, 2).abs().sum(-1)  # [B, N]
    mask = torch.zeros(2, 16, dtype=torch.bool)
    mask.scatter_(1, keep, True)
    assert torch.all(g[~mask] == 0) and torch.all(g[mask] > 0)


def test_bad_inputs():
    with pytest.raises(ValueError, match="patch_size"):
        TinyDiT(img_size=10, patch_size=4)
    with pytest.raises(ValueError, match="heads"):
        TinyDiT(img_size=8, patch_size=2, width=18, heads=4)
    m = _model()
    with pytest.raises(ValueError, match="x_t"):
        m(torch.zeros(1, 1, 16, 16), torch.tensor([1]))
    with pytest.raises(ValueError, match="keep_idx"):
        m(torch.zeros(1, 1, 8, 8), torch.tensor([1]), None, torch.tensor([[0, 16]]))
