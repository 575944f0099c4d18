"""``mx.metric``: online evaluation metrics, as MXNet 1.9.1's ``mxnet.metric``.

Metrics are host bookkeeping: each ``update`` brings labels and predictions (NDArrays of any
storage type, or numpy arrays) to the host as dense numpy arrays and accumulates in float64.
Every metric keeps a local (``reset_local``) and a global (``get_global``) tally.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy

from .errors import InvalidType, InvalidValue, NotSupported
from .factory import Factory
from .ndarray import NDArray

ARRAYS = (NDArray, numpy.ndarray)
"""What labels and predictions may be."""


def _host(array: Any, what: str = "array") -> numpy.ndarray:
    """``array`` (an NDArray of any storage type, or a numpy array) as a dense numpy array."""
    if isinstance(array, NDArray):
        return array.asnumpy()
    if isinstance(array, numpy.ndarray):
        return array
    raise InvalidType(f"{what} must be an NDArray or a numpy array, got {type(array).__name__}")


def check_label_shapes(labels: Any, preds: Any, wrap: bool = False,
                       shape: bool = False) -> tuple[Any, Any]:
    """Check that ``labels`` and ``preds`` have one length (``shape=True``: one shape); with
    ``wrap``, a single array becomes a list of it."""
    if shape:
        label_shape, pred_shape = labels.shape, preds.shape
    else:
        label_shape, pred_shape = len(labels), len(preds)
    if label_shape != pred_shape:
        raise InvalidValue(f"Shape of labels {label_shape} does not match shape of predictions "
                           f"{pred_shape}")
    return (_listed(labels), _listed(preds)) if wrap else (labels, preds)


def _listed(arrays: Any) -> Any:
    """A single array as a list of it; anything else as it is."""
    return [arrays] if isinstance(arrays, ARRAYS) else arrays


def _pairs(labels: Any, preds: Any) -> list[tuple[numpy.ndarray, numpy.ndarray]]:
    """The (label, pred) pairs of a batch as numpy arrays, their counts checked."""
    labels, preds = check_label_shapes(labels, preds, True)
    return [(_host(label, "label"), _host(pred, "pred")) for label, pred in zip(labels, preds)]


class EvalMetric:
    """The base class of metrics, as ``mx.metric.EvalMetric``: ``update`` adds to
    ``sum_metric`` and ``num_inst`` (and their ``global_`` twins); ``get`` is their ratio."""

    def __init__(self, name: str, output_names: list[str] | None = None,
                 label_names: list[str] | None = None, **kwargs: Any) -> None:
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict[str, Any]:
        """The configuration ``mx.metric.create(**config)`` recreates this metric from."""
        config = self._kwargs.copy()
        config.update({"metric": type(self).__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label: dict[str, Any], pred: dict[str, Any]) -> None:
        """Update with dicts of name -> array (``label_names`` / ``output_names`` select)."""
        preds = [pred[n] for n in self.output_names] if self.output_names is not None \
            else list(pred.values())
        labels = [label[n] for n in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        """Add a batch of labels and predictions (lists of arrays, or single arrays)."""
        raise NotSupported(f"{type(self).__name__} does not define update")

    def _add(self, value: Any, count: Any) -> None:
        """Add ``value`` to both sums and ``count`` to both instance counts."""
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self) -> None:
        """Clear the local and the global tallies."""
        self.reset_local()
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        """Clear the local tally (the global one keeps counting)."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple[Any, Any]:
        """``(name, value)`` of the local tally (nan before any update)."""
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, self.sum_metric / self.num_inst

    def get_global(self) -> tuple[Any, Any]:
        """``(name, value)`` of the global tally."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, self.global_sum_metric / self.global_num_inst

    def get_name_value(self) -> list[tuple[str, Any]]:
        """``get()`` as a list of ``(name, value)`` pairs."""
        return _zipped(*self.get())

    def get_global_name_value(self) -> list[tuple[str, Any]]:
        """``get_global()`` as a list of ``(name, value)`` pairs."""
        return _zipped(*self.get_global())


def _zipped(name: Any, value: Any) -> list[tuple[str, Any]]:
    names = name if isinstance(name, list) else [name]
    values = value if isinstance(value, list) else [value]
    return list(zip(names, values))


_FACTORY = Factory(EvalMetric, "metric")
register = _FACTORY.register
alias = _FACTORY.alias


def create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """A metric from a registered name (with constructor arguments), an ``EvalMetric``, a list
    of those (a ``CompositeEvalMetric``) or a function ``feval(label, pred)`` (a
    ``CustomMetric``)."""
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _FACTORY.create(metric, *args, **kwargs)


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns lists of their names and values."""

    def __init__(self, metrics: list[Any] | None = None, name: str = "composite",
                 output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        self.metrics = [create(m) for m in metrics or []]
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def add(self, metric: Any) -> None:
        """Add a child metric (anything ``create`` takes)."""
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        """The child metric at ``index``."""
        if not -len(self.metrics) <= index < len(self.metrics):
            raise InvalidValue(f"Metric index {index} is out of range 0 and {len(self.metrics)}")
        return self.metrics[index]

    def update_dict(self, labels: dict[str, Any], preds: dict[str, Any]) -> None:
        """Update every child with the named arrays this metric selects."""
        if self.label_names is not None:
            labels = OrderedDict(i for i in labels.items() if i[0] in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict(i for i in preds.items() if i[0] in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        """Update every child metric."""
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        """Reset every child metric."""
        for metric in self.metrics:
            metric.reset()

    def reset_local(self) -> None:
        """Reset the local tally of every child metric."""
        for metric in self.metrics:
            metric.reset_local()

    def get(self) -> tuple[list[str], list[Any]]:
        """The children's names and values."""
        return _joined([m.get() for m in self.metrics])

    def get_global(self) -> tuple[list[str], list[Any]]:
        """The children's names and global values."""
        return _joined([m.get_global() for m in self.metrics])

    def get_config(self) -> dict[str, Any]:
        """The configuration, with the children's."""
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


def _joined(results: list[tuple[Any, Any]]) -> tuple[list[str], list[Any]]:
    names: list[str] = []
    values: list[Any] = []
    for name, value in results:
        names.extend([name] if isinstance(name, str) else name)
        values.extend(value if isinstance(value, list) else [value])
    return names, values


def _class_ids(values: numpy.ndarray) -> numpy.ndarray:
    """Class ids as int32, as MXNet's ``astype('int32')`` (truncating floats)."""
    with numpy.errstate(invalid="ignore"):
        return values.astype(numpy.int32)


@register
@alias("acc")
class Accuracy(EvalMetric):
    """The fraction of predictions equal to the labels; predictions of another shape than the
    labels are scores, their argmax along ``axis`` the prediction."""

    def __init__(self, axis: int = 1, name: str = "accuracy",
                 output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        """Count the correct predictions of a batch."""
        for label, pred in _pairs(labels, preds):
            if pred.shape != label.shape:
                pred = _argmax(pred, self.axis)
            predicted, expected = _class_ids(pred).ravel(), _class_ids(label).ravel()
            check_label_shapes(expected, predicted)
            self._add(int((predicted == expected).sum()), len(predicted))


def _argmax(scores: numpy.ndarray, axis: int) -> numpy.ndarray:
    """The argmax of ``scores`` along ``axis``, checked."""
    if not -scores.ndim <= axis < scores.ndim:
        raise InvalidValue(f"axis {axis} is out of range for predictions of shape "
                           f"{scores.shape}")
    return numpy.argmax(scores, axis=axis)


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """The fraction of labels among the ``top_k`` (> 1) highest scores; the name is
    ``top_k_accuracy_<top_k>``."""

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy",
                 output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        if not isinstance(top_k, (int, numpy.integer)) or top_k <= 1:
            raise InvalidValue(f"Please use Accuracy if top_k is no more than 1, got {top_k!r}")
        self.top_k = int(top_k)
        self.name += f"_{self.top_k}"

    def update(self, labels: Any, preds: Any) -> None:
        """Count the labels among the top scores of a batch."""
        for label, pred in _pairs(labels, preds):
            if pred.ndim > 2:
                raise InvalidValue(f"Predictions should be no more than 2 dims, got shape "
                                   f"{pred.shape}")
            expected = _class_ids(label)
            check_label_shapes(expected, pred)
            if pred.ndim == 2:
                classes = pred.shape[1]
                top = min(classes, self.top_k)
                ranked = numpy.argpartition(pred.astype(numpy.float32), -top, axis=1)
                ranked = ranked[:, classes - top:]
                correct = (ranked == expected.reshape(-1, 1)).sum()
            else:  # MXNet compares the positions of a 1-D "prediction" with the labels
                ranked = numpy.argpartition(pred.astype(numpy.float32), -min(self.top_k, len(pred)))
                correct = (ranked == expected.ravel()).sum()
            self._add(int(correct), pred.shape[0])


class _BinaryCounts:
    """True / false positives / negatives of a binary classifier, local and global."""

    FIELDS = ("true_positives", "false_positives", "false_negatives", "true_negatives")

    def __init__(self) -> None:
        self.local = dict.fromkeys(self.FIELDS, 0)
        self.total = dict.fromkeys(self.FIELDS, 0)

    def update(self, label: Any, pred: Any) -> None:
        """Count a batch: ``pred`` scores of shape (n, 2), ``label`` n ids in {0, 1}."""
        scores = _host(pred, "pred")
        expected = _class_ids(_host(label, "label"))
        if scores.ndim != 2:
            raise InvalidValue(f"binary predictions must be scores of shape (n, 2), got shape "
                               f"{scores.shape}")
        check_label_shapes(expected, scores)
        if len(numpy.unique(expected)) > 2:
            raise InvalidValue(f"binary classification metrics support only two classes, got "
                               f"labels {numpy.unique(expected).tolist()}")
        predicted = numpy.argmax(scores, axis=1) == 1
        positive = expected.ravel() == 1
        counts = (predicted & positive, predicted & ~positive, ~predicted & positive,
                  ~predicted & ~positive)
        for field, hits in zip(self.FIELDS, counts):
            self.local[field] += int(hits.sum())
            self.total[field] += int(hits.sum())

    def clear(self, everything: bool = True) -> None:
        """Zero the local counts (and the global ones)."""
        self.local = dict.fromkeys(self.FIELDS, 0)
        if everything:
            self.total = dict.fromkeys(self.FIELDS, 0)

    def examples(self, use_global: bool = False) -> int:
        """The number of examples counted."""
        return sum((self.total if use_global else self.local).values())

    def fscore(self, use_global: bool = False) -> float:
        """The F1 score (0 where precision and recall are both 0)."""
        c = self.total if use_global else self.local
        tp, fp, fn = c["true_positives"], c["false_positives"], c["false_negatives"]
        precision = tp / (tp + fp) if tp + fp > 0 else 0.0
        recall = tp / (tp + fn) if tp + fn > 0 else 0.0
        if precision + recall == 0:
            return 0.0
        return 2 * precision * recall / (precision + recall)

    def matthewscc(self, use_global: bool = False) -> float:
        """The Matthews correlation coefficient (factors of 0 in the denominator left out, as
        MXNet; 0 before any example)."""
        c = self.total if use_global else self.local
        if not self.examples(use_global):
            return 0.0
        tp, fp = float(c["true_positives"]), float(c["false_positives"])
        fn, tn = float(c["false_negatives"]), float(c["true_negatives"])
        denominator = math.prod(t for t in (tp + fp, tp + fn, tn + fp, tn + fn) if t != 0)
        return (tp * tn - fp * fn) / math.sqrt(denominator)


AVERAGES = ("macro", "micro")
"""How F1 and MCC combine batches."""


class _BinaryMetric(EvalMetric):
    """A score of binary counts: ``macro`` averages the batches' scores, ``micro`` scores the
    counts of all batches."""

    def __init__(self, name: str, output_names: list[str] | None,
                 label_names: list[str] | None, average: str) -> None:
        if average not in AVERAGES:
            raise InvalidValue(f"{type(self).__name__}: average must be one of {AVERAGES}, got "
                               f"{average!r}")
        self.average = average
        self.counts = _BinaryCounts()
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def _score(self, use_global: bool) -> float:
        raise NotSupported(f"{type(self).__name__} does not define _score")

    def update(self, labels: Any, preds: Any) -> None:
        """Count a batch and update the score."""
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.counts.update(label, pred)
        if self.average == "macro":
            self._add(self._score(False), 1)
            self.counts.clear()
        else:
            self.sum_metric = self._score(False) * self.counts.examples()
            self.global_sum_metric = self._score(True) * self.counts.examples(True)
            self.num_inst = self.counts.examples()
            self.global_num_inst = self.counts.examples(True)

    def reset(self) -> None:
        """Clear the local and the global tallies and counts."""
        super().reset()
        self.counts.clear()

    def reset_local(self) -> None:
        """Clear the local tally and counts."""
        super().reset_local()
        self.counts.clear(everything=False)


@register
class F1(_BinaryMetric):
    """The F1 score of a binary classifier: predictions are (n, 2) scores, labels 0 or 1."""

    def __init__(self, name: str = "f1", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, average: str = "macro") -> None:
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global: bool) -> float:
        return self.counts.fscore(use_global)


@register
class MCC(_BinaryMetric):
    """The Matthews correlation coefficient of a binary classifier (inputs as ``F1``)."""

    def __init__(self, name: str = "mcc", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, average: str = "macro") -> None:
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global: bool) -> float:
        return self.counts.matthewscc(use_global)


@register
class PCC(EvalMetric):
    """The multiclass Matthews correlation (Pearson's on a K x K confusion matrix), as
    ``mx.metric.PCC``; predictions of another shape than the labels are scores (their argmax
    the prediction). The matrix grows with the largest class id seen."""

    def __init__(self, name: str = "pcc", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, has_global_stats: bool = True) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    @staticmethod
    def _correlation(matrix: numpy.ndarray) -> float:
        """The PCC of confusion matrix ``matrix`` (rows: predictions); nan when a side is
        constant."""
        n = matrix.sum()
        x, y = matrix.sum(axis=1), matrix.sum(axis=0)
        cov_xx, cov_yy = numpy.sum(x * (n - x)), numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        return float(numpy.sum(matrix.diagonal() * n - x * y) / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels: Any, preds: Any) -> None:
        """Add a batch's (prediction, label) pairs to the confusion matrices."""
        for label, pred in _pairs(labels, preds):
            label = _class_ids(label).ravel()
            pred = (pred.argmax(axis=1) if pred.shape != label.shape else _class_ids(pred)).ravel()
            if label.size and min(label.min(), pred.min()) < 0:
                raise InvalidValue(f"PCC: class ids must be >= 0, got labels {label.min()} / "
                                   f"predictions {pred.min()}")
            size = max(self.local_matrix.shape[0],
                       int(max(label.max(), pred.max())) + 1 if label.size else 0)
            batch = numpy.zeros((size, size))
            numpy.add.at(batch, (pred, label), 1)
            self.local_matrix = _grown(self.local_matrix, size) + batch
            self.global_matrix = _grown(self.global_matrix, size) + batch
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self) -> float:  # type: ignore[override]
        """The local PCC times the update count (``get`` divides it back)."""
        return self._correlation(self.local_matrix) * self.num_inst

    @property
    def global_sum_metric(self) -> float:  # type: ignore[override]
        """The global PCC times the global update count."""
        return self._correlation(self.global_matrix) * self.global_num_inst

    def reset(self) -> None:
        """Clear both confusion matrices."""
        self.global_num_inst = 0
        self.global_matrix = numpy.zeros((2, 2))
        self.reset_local()

    def reset_local(self) -> None:
        """Clear the local confusion matrix."""
        self.num_inst = 0
        self.local_matrix = numpy.zeros((2, 2))


def _grown(matrix: numpy.ndarray, size: int) -> numpy.ndarray:
    """``matrix`` padded with zeros to ``size`` x ``size``."""
    grow = size - matrix.shape[0]
    return numpy.pad(matrix, ((0, grow), (0, grow))) if grow > 0 else matrix


@register
class Perplexity(EvalMetric):
    """exp of the mean negative log-probability of the labels (probabilities along ``axis``,
    clipped below at 1e-10); labels equal to ``ignore_label`` are not counted."""

    def __init__(self, ignore_label: Any, axis: int = -1, name: str = "perplexity",
                 output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        """Add a batch's negative log-probabilities."""
        loss, count = 0.0, 0
        for label, pred in _pairs(labels, preds):
            if pred.ndim == 0 or not -pred.ndim <= self.axis < pred.ndim:
                raise InvalidValue(f"Perplexity: axis {self.axis} is out of range for "
                                   f"predictions of shape {pred.shape}")
            probs = numpy.moveaxis(pred, self.axis, -1).reshape(-1, pred.shape[self.axis])
            if label.size != probs.shape[0]:
                raise InvalidValue(f"shape mismatch: {label.shape} vs. {pred.shape}")
            ids = numpy.clip(_class_ids(label.ravel()), 0, probs.shape[1] - 1)  # pick's 'clip'
            prob = probs[numpy.arange(len(ids)), ids].astype(numpy.float64)
            if self.ignore_label is not None:
                ignored = label.ravel() == self.ignore_label
                prob[ignored] = 1.0
                count -= int(ignored.sum())
            loss -= float(numpy.log(numpy.maximum(1e-10, prob)).sum())
            count += prob.size
        self._add(loss, count)

    def get(self) -> tuple[str, float]:
        """``(name, exp(mean negative log-probability))``."""
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.sum_metric / self.num_inst)

    def get_global(self) -> tuple[str, float]:
        """The global perplexity."""
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.global_sum_metric / self.global_num_inst)


def _columns(array: numpy.ndarray) -> numpy.ndarray:
    """A 1-D array as a column (n, 1), in float64."""
    array = array.astype(numpy.float64)
    return array.reshape(-1, 1) if array.ndim == 1 else array


def _difference(label: numpy.ndarray, pred: numpy.ndarray) -> numpy.ndarray:
    """``label - pred`` (1-D arrays as columns; broadcasting as numpy)."""
    label, pred = _columns(label), _columns(pred)
    try:
        return label - pred
    except ValueError:
        raise InvalidValue(f"labels of shape {label.shape} and predictions of shape "
                           f"{pred.shape} do not broadcast") from None


class _Regression(EvalMetric):
    """The mean over batches of a function of ``label - pred``, one batch array one
    instance."""

    def __init__(self, name: str, output_names: list[str] | None,
                 label_names: list[str] | None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def _error(self, difference: numpy.ndarray) -> float:
        raise NotSupported(f"{type(self).__name__} does not define _error")

    def update(self, labels: Any, preds: Any) -> None:
        """Add each array's error."""
        for label, pred in _pairs(labels, preds):
            self._add(self._error(_difference(label, pred)), 1)


@register
class MAE(_Regression):
    """Mean absolute error."""

    def __init__(self, name: str = "mae", output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        super().__init__(name, output_names, label_names)

    def _error(self, difference: numpy.ndarray) -> float:
        return float(numpy.abs(difference).mean())


@register
class MSE(_Regression):
    """Mean squared error."""

    def __init__(self, name: str = "mse", output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        super().__init__(name, output_names, label_names)

    def _error(self, difference: numpy.ndarray) -> float:
        return float((difference ** 2).mean())


@register
class RMSE(_Regression):
    """Root mean squared error (per array, averaged over arrays)."""

    def __init__(self, name: str = "rmse", output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        super().__init__(name, output_names, label_names)

    def _error(self, difference: numpy.ndarray) -> float:
        return math.sqrt(float((difference ** 2).mean()))


class _LogLoss(EvalMetric):
    """The sum of ``-log(p + eps)`` of the labels' probabilities ``p`` (predictions (n, c)),
    one sample one instance."""

    def __init__(self, eps: float, name: str, output_names: list[str] | None,
                 label_names: list[str] | None) -> None:
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels: Any, preds: Any) -> None:
        """Add a batch's log losses."""
        for label, pred in _pairs(labels, preds):
            ids = label.ravel()
            if pred.ndim != 2 or ids.shape[0] != pred.shape[0]:
                raise InvalidValue(f"{self.name}: predictions must be (n, classes) for n labels, "
                                   f"got labels of shape {label.shape} and predictions of shape "
                                   f"{pred.shape}")
            classes = ids.astype(numpy.int64)
            outside = (classes < 0) | (classes >= pred.shape[1])
            if outside.any():
                raise InvalidValue(f"{self.name}: labels must be class ids in [0, "
                                   f"{pred.shape[1]}), got {ids[outside][0]}")
            prob = pred[numpy.arange(ids.shape[0]), classes].astype(numpy.float64)
            self._add(float((-numpy.log(prob + self.eps)).sum()), ids.shape[0])


@register
@alias("ce")
class CrossEntropy(_LogLoss):
    """Cross entropy of the labels under the predicted probabilities."""

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy",
                 output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_LogLoss):
    """Negative log-likelihood of the labels under the predicted probabilities."""

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss",
                 output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        super().__init__(eps, name, output_names, label_names)


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions and labels: ``macro`` averages the batches'
    coefficients, ``micro`` is one coefficient over all batches."""

    def __init__(self, name: str = "pearsonr", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, average: str = "macro") -> None:
        if average not in AVERAGES:
            raise InvalidValue(f"PearsonCorrelation: average must be one of {AVERAGES}, got "
                               f"{average!r}")
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def reset(self) -> None:
        """Clear the tallies (and the running moments of ``micro``)."""
        super().reset()
        self._moments = numpy.zeros(6)  # n, mean label, mean pred, M2 label, M2 pred, co-moment

    def update(self, labels: Any, preds: Any) -> None:
        """Add a batch."""
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            x = _host(label, "label").ravel().astype(numpy.float64)
            y = _host(pred, "pred").ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(float(numpy.corrcoef(y, x)[0, 1]), 1)
            else:
                self._add(0.0, 1)
                self._moments = _merged(self._moments, x, y)

    def get(self) -> tuple[str, float]:
        """``(name, coefficient)``."""
        if self.num_inst == 0:
            return self.name, float("nan")
        if self.average == "macro":
            return self.name, self.sum_metric / self.num_inst
        _, _, _, m2_label, m2_pred, comoment = self._moments
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return self.name, float(numpy.float64(comoment) / numpy.sqrt(m2_label * m2_pred))

    def get_global(self) -> tuple[str, float]:
        """The global coefficient (``micro``: as ``get``)."""
        return self.get() if self.average == "micro" else super().get_global()


def _merged(moments: numpy.ndarray, x: numpy.ndarray, y: numpy.ndarray) -> numpy.ndarray:
    """Running count, means, second moments and co-moment of (x, y) with a batch added
    (Chan et al.'s pairwise update)."""
    n, mean_x, mean_y, m2_x, m2_y, c_xy = moments
    k = x.size
    if k == 0:
        return moments
    total = n + k
    bx, by = x.mean(), y.mean()
    dx, dy = bx - mean_x, by - mean_y
    return numpy.array([
        total, mean_x + dx * k / total, mean_y + dy * k / total,
        m2_x + ((x - bx) ** 2).sum() + dx * dx * n * k / total,
        m2_y + ((y - by) ** 2).sum() + dy * dy * n * k / total,
        c_xy + ((x - bx) * (y - by)).sum() + dx * dy * n * k / total])


@register
class Loss(EvalMetric):
    """The mean of the predictions (a loss the model computed); labels are ignored."""

    def __init__(self, name: str = "loss", output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _: Any, preds: Any) -> None:
        """Add the sum and the number of a batch's losses."""
        for pred in _listed(preds):
            values = _host(pred, "pred")
            self._add(float(values.sum(dtype=numpy.float64)), values.size)


@register
class CustomMetric(EvalMetric):
    """A metric of ``feval(label, pred)`` on numpy arrays, returning a value (one instance) or
    ``(sum_metric, num_inst)``; named ``feval``'s name (``custom(<lambda>)`` for a lambda)."""

    def __init__(self, feval: Callable[[numpy.ndarray, numpy.ndarray], Any],
                 name: str | None = None, allow_extra_outputs: bool = False, output_names: list[str] | None = None,
                 label_names: list[str] | None = None) -> None:
        if name is None:
            name = feval.__name__
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels: Any, preds: Any) -> None:
        """Add ``feval`` of each (label, pred) pair."""
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        else:
            labels, preds = _listed(labels), _listed(preds)
        for pred, label in zip(preds, labels):
            result = self._feval(_host(label, "label"), _host(pred, "pred"))
            if isinstance(result, tuple):
                self._add(*result)
            else:
                self._add(result, 1)

    def get_config(self) -> dict[str, Any]:
        """Not available: a function cannot be serialized."""
        raise NotSupported("CustomMetric cannot be serialized")


def np(numpy_feval: Callable[[numpy.ndarray, numpy.ndarray], Any], name: str | None = None,
       allow_extra_outputs: bool = False) -> CustomMetric:
    """A ``CustomMetric`` of a function of numpy ``(label, pred)`` (MXNet's ``mx.metric.np``)."""
    def feval(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


__all__ = ["Accuracy", "CompositeEvalMetric", "CrossEntropy", "CustomMetric", "EvalMetric", "F1",
           "Loss", "MAE", "MCC", "MSE", "NegativeLogLikelihood", "PearsonCorrelation",
           "Perplexity", "RMSE", "TopKAccuracy", "check_label_shapes", "create", "np",
           "register"]
