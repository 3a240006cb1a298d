#!/usr/bin/env python3
"""A tesbo objective plugin in Python with a categorical parameter.

Branin on x1 in [-5, 10], x2 in [0, 15], with x1 shifted and the value
offset by the choice of "variant" (minimized; only "right" reaches
Branin's minimum 0.397887, at x1 = pi - 2, x2 = 2.275, among others):

    variant   shift of x1   offset
    plain          0          0.5
    right          2          0
    left          -3          1

A Categorical parameter is declared with its choices and no bounds. In
Evaluate, its coordinate is the chosen index as an exact float (0, 1 or 2
here), in the order of the choices; Int parameters would be exact integers
too. Everything else (the handshake, TLS, the gRPC services) is
objective.py's, imported from next to this file. Use it through the
wrapper shifted-branin-py (see README.md):

    ln -s "$PWD/shifted-branin-py" plugins/shifted-branin-py
    tesbo-host run --objective shifted-branin-py --iters 10
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import grpc  # noqa: E402

import objective  # noqa: E402
import tesbo_pb2 as pb  # noqa: E402
import tesbo_pb2_grpc as pbg  # noqa: E402

VARIANTS = ["plain", "right", "left"]
SHIFT = {"plain": (0.0, 0.5), "right": (2.0, 0.0), "left": (-3.0, 1.0)}


def shifted_branin(x1, x2, variant):
    shift, offset = SHIFT[variant]
    return objective.branin(x1 + shift, x2) + offset


class ShiftedBranin(pbg.ObjectiveServicer):
    def Info(self, request, context):
        return pb.ObjectiveInfo(
            name="shifted branin (python)",
            params=[
                pb.Param(name="x1", kind=pb.PARAM_KIND_FLOAT, low=-5, high=10),
                pb.Param(name="x2", kind=pb.PARAM_KIND_FLOAT, low=0, high=15),
                pb.Param(name="variant", kind=pb.PARAM_KIND_CATEGORICAL, choices=VARIANTS),
            ],
            minimize=True,
            optimum=0.397887,
        )

    def Evaluate(self, request, context):
        if len(request.x) != 3:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "want 3 coordinates")
        x1, x2, c = request.x
        if c != int(c) or not 0 <= c < len(VARIANTS):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "variant = %r is not a choice index 0..%d" % (c, len(VARIANTS) - 1))
        return pb.EvaluateResponse(value=shifted_branin(x1, x2, VARIANTS[int(c)]))


if __name__ == "__main__":
    sys.exit(objective.serve(ShiftedBranin()))
