#!/usr/bin/python3
"""Writes the bad ONNX inputs of tests/engine/tst_badinputs.cpp into this folder (the JSON,
tree and hardware cases are hand-written files beside them). Each model is a one- or
two-conv graph that is well formed except for the one defect its name says.

    /usr/bin/python3 tests/data/bad/make_bad.py
"""

import os
import random

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "..", "..", "samples", "models")


def conv_model(dims, opset=17, name="conv1"):
    """x[dims] -> Conv(8 filters, 3x3, pad 1) -> y; the weight is a stripped initializer."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 3, 3, 3], [0.0] * (8 * 3 * 3 * 3))
    node = helper.make_node("Conv", ["x", "w"], ["y"], name=name, kernel_shape=[3, 3],
                            pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "bad", [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="tilescope-bad-inputs")
    model.ir_version = 8
    return model


def save(model, name):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(model.SerializeToString())


def main():
    with open(os.path.join(SAMPLES, "resnet50.onnx"), "rb") as f:
        full = f.read()
    with open(os.path.join(HERE, "truncated.onnx"), "wb") as f:
        f.write(full[: len(full) // 2])
    rng = random.Random(6)
    with open(os.path.join(HERE, "garbage.onnx"), "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(2048)))
    save(conv_model(["N", 3, "height", "width"]), "dynamic_shape.onnx")
    save(conv_model(["N", 3, 16, 16], opset=99), "opset_too_new.onnx")
    save(conv_model(["N", 3, 0, 16]), "zero_dim.onnx")


if __name__ == "__main__":
    main()
