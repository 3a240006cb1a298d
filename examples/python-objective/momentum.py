#!/usr/bin/env python3
"""A tesbo objective plugin in Python with a conditional parameter.

"momentum" exists only for the SGD optimizer: it is declared with
active_if, a Condition on the categorical "optimizer". For Adam the host
sends NaN in its place (Evaluate below refuses anything else, to show the
contract); for SGD a number in [0, 0.99]. A made-up loss (minimized):

    sgd:   (log10(lr) + 2)^2 + (momentum - 0.9)^2      best 0 at lr 0.01, momentum 0.9
    adam:  (log10(lr) + 3)^2 + 0.05                    best 0.05 at lr 0.001

Everything else (the handshake, TLS, the gRPC services) is objective.py's.
Use it through the wrapper momentum-py (see README.md):

    ln -s "$PWD/momentum-py" plugins/momentum-py
    tesbo-host run --objective momentum-py --iters 10
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import grpc  # noqa: E402

import objective  # noqa: E402
import tesbo_pb2 as pb  # noqa: E402
import tesbo_pb2_grpc as pbg  # noqa: E402

OPTIMIZERS = ["sgd", "adam"]


def loss(lr, optimizer, momentum):
    if optimizer == "sgd":
        return (math.log10(lr) + 2) ** 2 + (momentum - 0.9) ** 2
    return (math.log10(lr) + 3) ** 2 + 0.05


class Momentum(pbg.ObjectiveServicer):
    def Info(self, request, context):
        return pb.ObjectiveInfo(
            name="momentum (python)",
            params=[
                pb.Param(name="lr", kind=pb.PARAM_KIND_LOG_FLOAT, low=1e-5, high=1),
                pb.Param(name="optimizer", kind=pb.PARAM_KIND_CATEGORICAL, choices=OPTIMIZERS),
                pb.Param(name="momentum", kind=pb.PARAM_KIND_FLOAT, low=0, high=0.99,
                         active_if=pb.Condition(parent="optimizer", values=["sgd"])),
            ],
            minimize=True,
            optimum=0,
        )

    def Evaluate(self, request, context):
        if len(request.x) != 3:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "want 3 coordinates")
        lr, c, momentum = request.x
        optimizer = OPTIMIZERS[int(c)]
        if (optimizer == "sgd") == math.isnan(momentum):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "momentum = %r with optimizer %s: want a number only for sgd" % (momentum, optimizer))
        return pb.EvaluateResponse(value=loss(lr, optimizer, momentum))


if __name__ == "__main__":
    sys.exit(objective.serve(Momentum()))
