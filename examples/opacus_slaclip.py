"""An ordinary Opacus training loop made private with SlaClip's adaptive clipping.

Shows: ``make_private_slaclip`` is a drop-in for ``PrivacyEngine.make_private``. The loop itself does not
change; the clipping threshold ``optimizer.current_clip`` adapts from a noised "slack indicator" released with
the gradients, and the epsilon spent equals vanilla DP-SGD's at the same noise, sample rate and steps.
A tiny MLP on scikit-learn's ``load_digits`` (no downloads), once with vanilla Opacus and once with SlaClip,
both starting from a deliberately poor clip C0 = 0.01
(and vanilla once more from a well-chosen C0 = 1, for reference).

Run:  python examples/opacus_slaclip.py        (needs the ``[dp]`` extra: opacus; about 5 s on one CPU thread)
"""

import warnings

import torch
from opacus import PrivacyEngine
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, TensorDataset

from icml26.core import seed_everything, set_threads
from icml26.slaclip import make_private_slaclip

EPOCHS, NOISE, C0, DELTA = 8, 1.0, 0.01, 1e-5


def train(use_slaclip: bool, c0: float, data) -> tuple[float, float, float]:
    """Train one model from clip ``c0``; return (test accuracy, final clip threshold, epsilon)."""
    seed_everything(0)
    x_tr, x_te, y_tr, y_te = data
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=128)
    engine = PrivacyEngine(accountant="rdp")
    if use_slaclip:  # the only changed line: make_private -> make_private_slaclip (plus the threshold clamp)
        model, optimizer, loader = make_private_slaclip(
            engine,
            module=model,
            optimizer=optimizer,
            data_loader=loader,
            noise_multiplier=NOISE,
            max_grad_norm=c0,
            c_min=0.01,
            c_max=20.0,
        )
    else:
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=NOISE, max_grad_norm=c0
        )
    for _ in range(EPOCHS):  # the usual loop, unchanged
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    with torch.no_grad():
        acc = (model(x_te).argmax(1) == y_te).float().mean().item()
    clip = optimizer.current_clip if use_slaclip else optimizer.max_grad_norm  # SlaClip's is a released value
    return acc, float(clip), engine.get_epsilon(DELTA)


def main() -> None:
    set_threads()  # ICML26_NUM_THREADS, else up to 4
    warnings.filterwarnings("ignore")  # Opacus warns about secure_mode; use secure_mode=True when deploying
    x, y = load_digits(return_X_y=True)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.2, random_state=0, stratify=y)
    scaler = StandardScaler().fit(x_tr)
    data = (
        torch.tensor(scaler.transform(x_tr), dtype=torch.float32),
        torch.tensor(scaler.transform(x_te), dtype=torch.float32),
        torch.tensor(y_tr),
        torch.tensor(y_te),
    )
    # vanilla from the poor C0, vanilla from a well-chosen C0 = 1, SlaClip from the poor C0
    for name, flag, c0 in (("vanilla", False, C0), ("vanilla", False, 1.0), ("slaclip", True, C0)):
        acc, clip, eps = train(flag, c0, data)
        print(f"{name:8s} accuracy={acc:.3f} clip: {c0:g} -> {clip:.3f} epsilon={eps:.3f} (delta={DELTA:g})")


if __name__ == "__main__":
    main()
