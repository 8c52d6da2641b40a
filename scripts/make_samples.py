#!/usr/bin/python3
"""Export Tilescope's sample ONNX models (samples/models/) and the importer's small test
models (tests/data/) from torchvision / torch, without weights.

Run with the system interpreter that has torch, torchvision and onnx:
    /usr/bin/python3 scripts/make_samples.py                 # samples + test data
    /usr/bin/python3 scripts/make_samples.py --with-weights /tmp/resnet50_full.onnx
                                                             # ResNet-50 with all weights
                                                             # (for bench_import, ~100 MB)

Weights are stripped by turning every large float initializer into an external-data
reference to a file that is never written: the graph, the initializer dims and the small
shape constants stay, so each file is small and the importer must never read weights.

For each model the script also prints an independent MAC count per sample taken from
torch forward hooks (Conv2d / Linear modules, plus explicit formulas for the attention
products, which are not modules). Those figures are what tests/engine/tst_onnximport.cpp
compares the importer against; they are listed in docs/import.md.
"""

import argparse
import io
import math
import os
import sys

import onnx
import torch
import torch.nn as nn
import torchvision.models as tvm

OPSET = 17
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- a hand-written Transformer encoder (explicit Q/K/V, QK^T, softmax, AV, LN, FFN) ---

class MatMul(nn.Module):
    """torch.matmul as a module, so the MAC-counting hook sees the attention products."""

    def forward(self, a, b):
        return torch.matmul(a, b)


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.qk, self.av = MatMul(), MatMul()

    def forward(self, x):  # x: [N, S, d]
        n, s, d = x.shape

        def split(t):  # [N, S, d] -> [N, h, S, dk]
            return t.reshape(n, s, self.h, self.dk).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        a = self.qk(q, k.transpose(2, 3)) * (1.0 / math.sqrt(self.dk))
        a = torch.softmax(a, dim=-1)
        y = self.av(a, v).transpose(1, 2).reshape(n, s, d)
        return self.o(y)


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.attn = Attention(d, heads)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.act = nn.GELU()

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ff2(self.act(self.ff1(x))))


class Encoder(nn.Module):
    def __init__(self, layers=4, d=512, heads=8, ffn=2048):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(d, heads, ffn) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class TorchEncoder(nn.Module):
    """torch.nn.TransformerEncoder as torch exports it: packed QKV projection, batch merged
    with the heads ([S, N*h, dk]) and bmm."""

    def __init__(self, layers=2, d=64, heads=4, ffn=128):
        super().__init__()
        # Sequence-first layout and a non-standard activation callable keep torch off its
        # fused fast paths (_transformer_encoder_layer_fwd, _native_multi_head_attention),
        # which have no ONNX export.
        layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, batch_first=False,
                                           activation=lambda t: torch.relu(t))
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x):  # x: [N, S, d]
        return self.enc(x.transpose(0, 1)).transpose(0, 1)


# --- independent MAC count (per sample) from module hooks ---

def count_macs(model, example):
    total = [0]
    n = example.shape[0]

    def conv(m, inp, out):
        per_out = (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]
        total[0] += out.numel() // n * per_out

    def linear(m, inp, out):
        total[0] += out.numel() // n * m.in_features

    def matmul(m, inp, out):
        total[0] += out.numel() // n * inp[0].shape[-1]

    def mha(m, inp, out):
        # packed in-projection (3 d^2 per token), QK^T and AV (S^2 d each), out-projection
        # (d^2 per token): F.multi_head_attention_forward calls these functionally, so no
        # Linear hook fires for them.
        s, d = inp[0].shape[0], m.embed_dim  # sequence-first input [S, N, d]
        total[0] += 4 * s * d * d + 2 * s * s * d

    hooks = []
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(conv))
        elif isinstance(m, nn.Linear) and not isinstance(
                m, nn.modules.linear.NonDynamicallyQuantizableLinear):
            hooks.append(m.register_forward_hook(linear))
        elif isinstance(m, MatMul):
            hooks.append(m.register_forward_hook(matmul))
        elif isinstance(m, nn.MultiheadAttention):
            hooks.append(m.register_forward_hook(mha))
    with torch.no_grad():
        model(example)
    for h in hooks:
        h.remove()
    return total[0]


# --- export ---

def export(model, example, keep_value_info=True):
    model.eval()
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, example, buf, opset_version=OPSET, do_constant_folding=True,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    m = onnx.load_from_string(buf.getvalue())
    del m.graph.value_info[:]
    if keep_value_info:
        m = onnx.shape_inference.infer_shapes(m, data_prop=True)
    return m


def strip_weights(m, missing_file):
    """Turn every float initializer of more than 16 elements into a reference to a missing
    external file; dims stay, data goes. Integer shape constants stay inline."""
    for t in m.graph.initializer:
        elems = 1
        for d in t.dims:
            elems *= d
        if t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16) and elems > 16:
            size = elems * (4 if t.data_type == onnx.TensorProto.FLOAT else 2)
            t.ClearField("raw_data")
            t.ClearField("float_data")
            del t.external_data[:]
            for key, value in (("location", missing_file), ("offset", "0"),
                               ("length", str(size))):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
            t.data_location = onnx.TensorProto.EXTERNAL
    return m


def write(m, path, model_name):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    m.graph.name = model_name
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return os.path.getsize(path)


def image(size=224):
    return torch.randn(1, 3, size, size)


SAMPLES = {
    # name: (constructor, example input)
    "resnet50": (lambda: tvm.resnet50(weights=None), image),
    "googlenet": (lambda: tvm.googlenet(weights=None, aux_logits=False, init_weights=False),
                  image),
    "inception_v3": (lambda: tvm.inception_v3(weights=None, aux_logits=False,
                                              init_weights=False), lambda: image(299)),
    "mobilenet_v2": (lambda: tvm.mobilenet_v2(weights=None), image),
    "transformer": (lambda: Encoder(), lambda: torch.randn(1, 128, 512)),
}

# Small architectures not among the samples, exported the way torch does it, to exercise
# the importer: channel shuffle (Reshape/Transpose), Concat, Flatten+Gemm, depthwise+SE,
# ReduceMean pooling, and torch's own MultiheadAttention graph. Saved without value_info
# so the importer's own shape propagation is what is tested.
TESTDATA = {
    "shufflenet_v2_x0_5": (lambda: tvm.shufflenet_v2_x0_5(weights=None), image),
    "squeezenet1_0": (lambda: tvm.squeezenet1_0(weights=None), image),
    "densenet121": (lambda: tvm.densenet121(weights=None), image),
    "vgg11": (lambda: tvm.vgg11(weights=None), image),
    "alexnet": (lambda: tvm.alexnet(weights=None), image),
    "mnasnet0_5": (lambda: tvm.mnasnet0_5(weights=None), image),
    "efficientnet_b0": (lambda: tvm.efficientnet_b0(weights=None), image),
    "torch_encoder": (lambda: TorchEncoder(), lambda: torch.randn(1, 16, 64)),
}

# The scale case of tests/bench/bench_scale.sh (--scale): a BERT-base-sized encoder,
# 12 layers, d_model 768, 12 heads, FFN 3072, sequence 128 -- a few hundred scheduled layers.
SCALE = {
    "transformer12": (lambda: Encoder(layers=12, d=768, heads=12, ffn=3072),
                      lambda: torch.randn(1, 128, 768)),
}


def build(table, outdir, keep_value_info, only):
    for name, (ctor, ex) in table.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        model = ctor().eval()
        example = ex()
        macs = count_macs(model, example)
        # Parameters once every BatchNorm is folded into the conv before it (what torch's
        # export does): the BN's scale merges into the weights, its shift becomes a bias.
        params = sum(p.numel() for p in model.parameters()) - sum(
            m.weight.numel() for m in model.modules() if isinstance(m, nn.BatchNorm2d))
        m = strip_weights(export(model, example, keep_value_info), name + ".weights.bin")
        size = write(m, os.path.join(outdir, name + ".onnx"), name)
        print(f"{name}: {size / 1024:.0f} KiB, {len(m.graph.node)} nodes, "
              f"MACs per sample (torch hooks) = {macs}, params (BN folded) = {params}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--with-weights", metavar="OUT",
                    help="only write ResNet-50 with full (random) weights to OUT")
    ap.add_argument("--only", nargs="*", help="only these model names")
    ap.add_argument("--scale", action="store_true",
                    help="only write the scale benchmark's model (samples/models/transformer12.onnx)")
    args = ap.parse_args()
    if args.with_weights:
        torch.manual_seed(0)
        m = export(tvm.resnet50(weights=None).eval(), image(), keep_value_info=False)
        size = write(m, args.with_weights, "resnet50")
        print(f"{args.with_weights}: {size / 1e6:.1f} MB")
        return 0
    if args.scale:
        build(SCALE, os.path.join(REPO, "samples", "models"), True, args.only)
        return 0
    build(SAMPLES, os.path.join(REPO, "samples", "models"), True, args.only)
    build(TESTDATA, os.path.join(REPO, "tests", "data"), False, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
