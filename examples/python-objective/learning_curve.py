#!/usr/bin/env python3
"""A tesbo objective plugin in Python that reports a learning curve.

A stand-in for a training run: with learning rate lr (log scale) and width
w, the "validation accuracy" after epoch k is

    acc(k) = q * (1 - exp(-k * lr * 10)),  q = 1 - (log10(lr) + 2)**2 / 4 - (w - 0.6)**2

(maximized; q, the accuracy after many epochs, is best at lr = 0.01,
w = 0.6). Each epoch it reports acc(k) to the host, and when the host's
pruner says stop it returns that last value at once. Info declares
reports=True (it serves ReportEvaluate, through objective.report_evaluate)
and max_step, the number of epochs of a full run. Use it through the
wrapper learning-curve-py (see README.md):

    ln -s "$PWD/learning-curve-py" plugins/learning-curve-py
    tesbo-host run --objective learning-curve-py --pruner median --iters 10
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import objective  # noqa: E402
import tesbo_pb2 as pb  # noqa: E402
import tesbo_pb2_grpc as pbg  # noqa: E402

EPOCHS = 8


def accuracy(lr, w, epoch):
    q = 1 - (math.log10(lr) + 2) ** 2 / 4 - (w - 0.6) ** 2
    return q * (1 - math.exp(-epoch * lr * 10))


def train(x, report):
    """Trains for EPOCHS epochs, reporting each; stops when told to."""
    lr, w = x
    acc = 0.0
    for epoch in range(1, EPOCHS + 1):
        acc = accuracy(lr, w, epoch)
        if report(epoch, acc):
            break
    return acc


class LearningCurve(pbg.ObjectiveServicer):
    def Info(self, request, context):
        return pb.ObjectiveInfo(
            name="learning curve (python)",
            params=[
                pb.Param(name="lr", kind=pb.PARAM_KIND_LOG_FLOAT, low=1e-4, high=1),
                pb.Param(name="w", kind=pb.PARAM_KIND_FLOAT, low=0, high=1),
            ],
            reports=True,
            max_step=EPOCHS,
        )

    def Evaluate(self, request, context):
        # Without early stopping the host calls Evaluate: report nothing.
        return pb.EvaluateResponse(value=train(request.x, lambda step, value: False))

    def ReportEvaluate(self, request_iterator, context):
        return objective.report_evaluate(
            request_iterator, context, lambda req, report: pb.EvaluateResponse(value=train(req.x, report)))


if __name__ == "__main__":
    sys.exit(objective.serve(LearningCurve()))
