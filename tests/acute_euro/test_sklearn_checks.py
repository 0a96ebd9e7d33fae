"""scikit-learn's own estimator checks (``parametrize_with_checks``) for ACUTEConfidenceEstimator.

No check is skipped: with 2-D input the estimator treats ``X`` as one layer (``L = 1``) and the default
``view="mean"`` applies.  (sklearn itself skips the array-API check unless ``SCIPY_ARRAY_API`` is set.)
"""

from sklearn.ensemble import RandomForestClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from icml26.acute_euro import ACUTEConfidenceEstimator


@parametrize_with_checks([ACUTEConfidenceEstimator(estimator=RandomForestClassifier(n_estimators=5, random_state=0))])
def test_sklearn_compatible(estimator, check):
    check(estimator)
