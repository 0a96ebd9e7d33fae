"""ACUTE confidence for an ordinary scikit-learn pipeline, scored by ECE and auc-EURO.

Shows: ``ACUTEConfidenceEstimator`` is an sklearn classifier that learns ``P(prediction is correct)`` from a
model's internal representation ("activations") plus its raw confidence. Here the model is
``StandardScaler + LogisticRegression`` on ``load_digits``, strongly regularised (``C=0.01``) so that its raw
confidence (the top class probability) is badly underconfident. Its activations are the ten class scores
(``decision_function``), a 2-D ``[n, d]`` array that ACUTE treats as one layer. The confidence estimator is fit
on a held-out calibration split and scored on a test split, next to Platt scaling of the raw confidence.

Run:  python examples/sklearn_acute.py        (core install only; about 4 s)
"""

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from icml26.acute_euro import ACUTEConfidenceEstimator, PlattCalibrator, auc_euro, binned_ece, smooth_ece


def outputs(model, X, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(activations, raw confidence, correctness 0/1) of the model on ``X``."""
    proba = model.predict_proba(X)
    return model.decision_function(X), proba.max(axis=1), (proba.argmax(axis=1) == y).astype(int)


def main() -> None:
    X, y = load_digits(return_X_y=True)
    # three splits: fit the model / fit the confidence estimator / evaluate
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.5, random_state=0, stratify=y)
    X_cal, X_te, y_cal, y_te = train_test_split(X_rest, y_rest, test_size=0.5, random_state=0, stratify=y_rest)

    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.01, max_iter=2000)).fit(X_fit, y_fit)
    act_cal, raw_cal, ok_cal = outputs(model, X_cal, y_cal)
    act_te, raw_te, ok_te = outputs(model, X_te, y_te)

    acute = ACUTEConfidenceEstimator(view="mean", n_estimators=200, random_state=0)
    acute.fit(act_cal, ok_cal, raw_conf=raw_cal)  # y = 1 where the model's prediction was right
    p_acute = acute.predict_proba(act_te, raw_conf=raw_te)[:, 1]
    p_platt = PlattCalibrator().fit(raw_cal, ok_cal).predict_proba(raw_te)[:, 1]

    print(f"model accuracy on the test split: {ok_te.mean():.3f} ({len(ok_te)} digits)")
    print(f"{'confidence':12s} {'smooth ECE':>10s} {'binned ECE':>10s} {'auc-EURO':>9s}")
    for name, p in (("raw", raw_te), ("platt", p_platt), ("acute", p_acute)):
        print(f"{name:12s} {smooth_ece(p, ok_te):10.3f} {binned_ece(p, ok_te):10.3f} {auc_euro(p, ok_te):9.3f}")


if __name__ == "__main__":
    main()
