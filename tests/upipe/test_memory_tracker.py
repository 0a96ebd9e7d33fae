import pytest
import torch
from torch import nn

from icml26.upipe.memory import LiveTensorBytes


def test_known_allocation_views_del_and_peak():
    with LiveTensorBytes() as mem:
        assert mem.current == 0
        a = torch.empty(1000, dtype=torch.float32)
        assert mem.current == 4000
        v = a.view(10, 100)[2:5]  # a view adds nothing
        a.add_(1.0)  # neither does an in-place op
        assert mem.current == 4000
        b = torch.zeros(250, dtype=torch.float64)
        assert mem.current == 6000 and mem.peak == 6000
        del a, v
        assert mem.current == 2000  # freed when the last view goes
        assert mem.peak == 6000  # the peak survives the free
        mem.reset_peak()
        assert mem.peak == 2000
        del b
        assert mem.current == 0


def test_tensors_from_before_are_not_counted_through_views():
    x = torch.randn(1000)
    with LiveTensorBytes() as mem:
        y = x.view(10, 100).t()
        z = y * 2
        assert mem.current == z.untyped_storage().nbytes() == 4000


def test_phases_record_start_peak_end():
    with LiveTensorBytes() as mem:
        keep = torch.empty(100)
        with mem.phase("work") as rec:
            tmp = torch.empty(300)
            del tmp
        assert rec == {"start": 400, "peak": 1600, "end": 400}
        assert mem.phases["work"]["peak"] == 1600
        del keep
    with pytest.raises(ValueError, match="name"):
        with mem.phase(""):
            pass


def test_backward_ops_are_tracked():
    lin = nn.Linear(64, 64)
    x = torch.randn(32, 64, requires_grad=True)
    with LiveTensorBytes() as mem:
        y = lin(x).relu()
        with mem.phase("backward") as rec:
            y.sum().backward()
    assert rec["peak"] > rec["start"]
    assert x.grad is not None


def test_agrees_with_memtracker_on_mlp():
    mt = pytest.importorskip("torch.distributed._tools.mem_tracker")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256))
    x = torch.randn(512, 256)
    tracker = mt.MemTracker()
    tracker.track_external(model)
    with tracker:
        model(x).sum().backward()
    peak_ref = tracker.get_tracker_snapshot("peak")[torch.device("cpu")]["Total"]
    for p in model.parameters():
        p.grad = None
    with LiveTensorBytes() as mem:
        model(x).sum().backward()
    params = sum(p.numel() * 4 for p in model.parameters())
    ours = mem.peak + params  # MemTracker also counts the parameters (not the input made outside it)
    assert abs(ours / peak_ref - 1) < 0.05, (ours, peak_ref)


def test_allocator_bytes_sees_a_known_allocation_and_kernel_scratch():
    import torch

    from icml26.upipe.memory import AllocatorBytes, LiveTensorBytes

    with AllocatorBytes() as alloc:
        a = torch.empty(1 << 18)  # 1 MiB
        b = torch.empty(1 << 17)  # 0.5 MiB
        del a
        c = torch.empty(1 << 16)  # 0.25 MiB (after a was freed: the peak stays 1.5 MiB)
    assert alloc.peak == 3 << 19 and alloc.events >= 4
    del b, c
    # the CPU flash kernel allocates score scratch it never returns: the allocator sees it, live tensors do not
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 1, 2048, 16) for _ in range(3))
    with LiveTensorBytes() as live:
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
    with AllocatorBytes() as alloc:
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
    assert alloc.peak > live.peak
