#!/usr/bin/env python3
"""A tesbo objective plugin in Python with several outputs.

Two objectives to minimize, cost and loss, which pull x0 apart (cost is
best at x0 = 0.2, loss at x0 = 0.8), and a constraint, budget = x0 + x1,
feasible when at most 1.2: the function of examples/go-outputs. tesbo-host
finds the Pareto set of cost and loss among the points within budget.

Info declares the outputs (ObjectiveInfo.outputs: a name, a goal and, for
a constraint, the feasible side and its bound); Evaluate returns one value
per output, in that order, in EvaluateResponse.outputs. A single objective
with constraints is declared the same way, with one MAXIMIZE or MINIMIZE
output. Everything else (the handshake, TLS, the gRPC services) is
objective.py's, imported from next to this file. Use it through the
wrapper tradeoff-py (see README.md):

    ln -s "$PWD/tradeoff-py" plugins/tradeoff-py
    tesbo-host run --objective tradeoff-py --iters 10
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import grpc  # noqa: E402

import objective  # noqa: E402
import tesbo_pb2 as pb  # noqa: E402
import tesbo_pb2_grpc as pbg  # noqa: E402


def tradeoff(x0, x1):
    cost = (x0 - 0.2) ** 2 + (x1 - 0.5) ** 2
    loss = (x0 - 0.8) ** 2 + (x1 - 0.5) ** 2
    return [cost, loss, x0 + x1]


class Tradeoff(pbg.ObjectiveServicer):
    def Info(self, request, context):
        return pb.ObjectiveInfo(
            name="tradeoff (python)",
            params=[
                pb.Param(name="x0", kind=pb.PARAM_KIND_FLOAT, low=0, high=1),
                pb.Param(name="x1", kind=pb.PARAM_KIND_FLOAT, low=0, high=1),
            ],
            outputs=[
                pb.Output(name="cost", goal=pb.OUTPUT_GOAL_MINIMIZE),
                pb.Output(name="loss", goal=pb.OUTPUT_GOAL_MINIMIZE),
                pb.Output(name="budget", goal=pb.OUTPUT_GOAL_CONSTRAINT,
                          feasible=pb.OUTPUT_SIDE_AT_MOST, bound=1.2),
            ],
        )

    def Evaluate(self, request, context):
        if len(request.x) != 2:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "want 2 coordinates")
        return pb.EvaluateResponse(outputs=tradeoff(request.x[0], request.x[1]))


if __name__ == "__main__":
    sys.exit(objective.serve(Tradeoff()))
