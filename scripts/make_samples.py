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
import torchvision.models.video  # noqa: F401  (tvm.video.r3d_18)

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


# --- Inception-ResNet-v1 (FaceNet; the layout of facenet-pytorch's InceptionResnetV1) ---

class BasicConv2d(nn.Module):
    def __init__(self, cin, cout, k, stride=1, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride=stride, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class Block35(nn.Module):
    def __init__(self, scale=0.17):
        super().__init__()
        self.scale = scale
        self.branch0 = BasicConv2d(256, 32, 1)
        self.branch1 = nn.Sequential(BasicConv2d(256, 32, 1), BasicConv2d(32, 32, 3, padding=1))
        self.branch2 = nn.Sequential(BasicConv2d(256, 32, 1), BasicConv2d(32, 32, 3, padding=1),
                                     BasicConv2d(32, 32, 3, padding=1))
        self.conv2d = nn.Conv2d(96, 256, 1)
        self.relu = nn.ReLU()

    def forward(self, x):
        out = torch.cat((self.branch0(x), self.branch1(x), self.branch2(x)), 1)
        return self.relu(self.conv2d(out) * self.scale + x)


class Block17(nn.Module):
    def __init__(self, scale=0.10):
        super().__init__()
        self.scale = scale
        self.branch0 = BasicConv2d(896, 128, 1)
        self.branch1 = nn.Sequential(BasicConv2d(896, 128, 1),
                                     BasicConv2d(128, 128, (1, 7), padding=(0, 3)),
                                     BasicConv2d(128, 128, (7, 1), padding=(3, 0)))
        self.conv2d = nn.Conv2d(256, 896, 1)
        self.relu = nn.ReLU()

    def forward(self, x):
        out = torch.cat((self.branch0(x), self.branch1(x)), 1)
        return self.relu(self.conv2d(out) * self.scale + x)


class Block8(nn.Module):
    def __init__(self, scale=0.20, no_relu=False):
        super().__init__()
        self.scale, self.no_relu = scale, no_relu
        self.branch0 = BasicConv2d(1792, 192, 1)
        self.branch1 = nn.Sequential(BasicConv2d(1792, 192, 1),
                                     BasicConv2d(192, 192, (1, 3), padding=(0, 1)),
                                     BasicConv2d(192, 192, (3, 1), padding=(1, 0)))
        self.conv2d = nn.Conv2d(384, 1792, 1)
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.conv2d(torch.cat((self.branch0(x), self.branch1(x)), 1)) * self.scale + x
        return out if self.no_relu else self.relu(out)


class Mixed6a(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch0 = BasicConv2d(256, 384, 3, stride=2)
        self.branch1 = nn.Sequential(BasicConv2d(256, 192, 1), BasicConv2d(192, 192, 3, padding=1),
                                     BasicConv2d(192, 256, 3, stride=2))
        self.branch2 = nn.MaxPool2d(3, stride=2)

    def forward(self, x):
        return torch.cat((self.branch0(x), self.branch1(x), self.branch2(x)), 1)


class Mixed7a(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch0 = nn.Sequential(BasicConv2d(896, 256, 1), BasicConv2d(256, 384, 3, stride=2))
        self.branch1 = nn.Sequential(BasicConv2d(896, 256, 1), BasicConv2d(256, 256, 3, stride=2))
        self.branch2 = nn.Sequential(BasicConv2d(896, 256, 1), BasicConv2d(256, 256, 3, padding=1),
                                     BasicConv2d(256, 256, 3, stride=2))
        self.branch3 = nn.MaxPool2d(3, stride=2)

    def forward(self, x):
        return torch.cat((self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)), 1)


class InceptionResnetV1(nn.Module):
    """FaceNet's Inception-ResNet-v1 (160x160 faces -> 512-d embedding)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            BasicConv2d(3, 32, 3, stride=2), BasicConv2d(32, 32, 3),
            BasicConv2d(32, 64, 3, padding=1), nn.MaxPool2d(3, stride=2), BasicConv2d(64, 80, 1),
            BasicConv2d(80, 192, 3), BasicConv2d(192, 256, 3, stride=2))
        self.repeat_1 = nn.Sequential(*[Block35(0.17) for _ in range(5)])
        self.mixed_6a = Mixed6a()
        self.repeat_2 = nn.Sequential(*[Block17(0.10) for _ in range(10)])
        self.mixed_7a = Mixed7a()
        self.repeat_3 = nn.Sequential(*[Block8(0.20) for _ in range(5)])
        self.block8 = Block8(no_relu=True)
        self.avgpool_1a = nn.AdaptiveAvgPool2d(1)
        self.last_linear = nn.Linear(1792, 512, bias=False)
        self.last_bn = nn.BatchNorm1d(512, eps=0.001)

    def forward(self, x):
        x = self.block8(self.repeat_3(self.mixed_7a(self.repeat_2(self.mixed_6a(
            self.repeat_1(self.stem(x)))))))
        x = self.last_bn(self.last_linear(self.avgpool_1a(x).flatten(1)))
        return nn.functional.normalize(x, p=2, dim=1)


# --- small hand-built architectures for the importer's new operators ---

class UNetDecoder(nn.Module):
    """Encoder-decoder with ConvTranspose2d upsampling (k=2,s=2 and k=4,s=2,p=1) and skips."""

    def __init__(self):
        super().__init__()
        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout),
                                 nn.ReLU())
        self.e1, self.e2, self.e3 = block(3, 16), block(16, 32), block(32, 64)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.d2 = block(64, 32)
        self.up1 = nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1)
        self.d1 = block(32, 16)
        self.out = nn.Conv2d(16, 2, 1)

    def forward(self, x):
        x1 = self.e1(x)
        x2 = self.e2(self.pool(x1))
        x3 = self.e3(self.pool(x2))
        y = self.d2(torch.cat((self.up2(x3), x2), 1))
        y = self.d1(torch.cat((self.up1(y), x1), 1))
        return self.out(y)


class DCGANGenerator(nn.Module):
    """DCGAN's generator: a 1x1 latent projected by ConvTranspose2d(k4, s1) then k4/s2/p1."""

    def __init__(self, nz=64, ngf=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4),
            nn.ReLU(), nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2), nn.ReLU(),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(),
            nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Recurrent(nn.Module):
    """Embedding Linear, a 2-layer bidirectional LSTM or GRU (batch first), a Linear head."""

    def __init__(self, cell, seq=12):
        super().__init__()
        self.emb = nn.Linear(16, 32)
        self.rnn = cell(32, 48, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(96, 10)

    def forward(self, x):
        y, _ = self.rnn(self.emb(x))
        return self.head(y[:, -1])


class Einsum(nn.Module):
    """torch.einsum as a module, so the MAC-counting hook sees the product."""

    def __init__(self, equation):
        super().__init__()
        self.equation = equation

    def forward(self, a, b):
        return torch.einsum(self.equation, a, b)


class EinsumAttention(nn.Module):
    """Multi-head self-attention written with einsum (d=64, 4 heads)."""

    def __init__(self, d=64, heads=4):
        super().__init__()
        self.h = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.qk, self.av = Einsum("nqhd,nkhd->nhqk"), Einsum("nhqk,nkhd->nqhd")

    def forward(self, x):
        n, s, d = x.shape
        q, k, v = (p(x).reshape(n, s, self.h, d // self.h) for p in (self.q, self.k, self.v))
        a = self.qk(q, k).softmax(-1)
        return self.o(self.av(a, v).reshape(n, s, d))


class Conv1dResNet(nn.Module):
    """A 1-D conv net (audio / sensor style): a stem Conv1d, then two residual blocks
    Conv1d -> BatchNorm1d -> ReLU -> Conv1d -> BatchNorm1d, added to the block input (the
    second block adds in the other operand order), on [N, 16, 256] maps."""

    def __init__(self, c=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(4, c, 3, padding=1), nn.ReLU())

        def block():
            return nn.Sequential(nn.Conv1d(c, c, 3, padding=1), nn.BatchNorm1d(c), nn.ReLU(),
                                 nn.Conv1d(c, c, 3, padding=1), nn.BatchNorm1d(c))
        self.b1, self.b2 = block(), block()

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(self.b1(x) + x)
        return torch.relu(x + self.b2(x))


class SegStem(nn.Module):
    """The first four convolutions of a segmentation network on a 1024 x 2048 frame
    (Cityscapes resolution): 3->32 s2, 32->32, 32->64 s2, 64->64, 3x3 with ReLU. Its maps
    (tens of MB per sample) are larger than any chip's buffers."""

    def __init__(self):
        super().__init__()
        layers = []
        for cin, cout, stride in ((3, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1)):
            layers += [nn.Conv2d(cin, cout, 3, stride=stride, padding=1), nn.ReLU()]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def swin_small():
    """torchvision's Swin Transformer cut to two stages of two blocks (plain and shifted
    windows, a patch merging between), embed dim 48: small enough for tests/data."""
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer([4, 4], 48, [2, 2], [3, 6], [7, 7])


# --- a Llama-style decoder: RMSNorm (pow / mean / rsqrt), rotary embeddings (rotate-half
# slices and concatenation), grouped-query attention (keys and values expanded and reshaped
# to the query heads), a causal mask built from shapes, SwiGLU; past keys and values in,
# present ones out (the KV cache), and dynamic batch, seq and past axes, as LLM exports are
# made ---

class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class DecoderAttention(nn.Module):
    def __init__(self, d, heads, kv_heads, window=None):
        super().__init__()
        self.h, self.kvh, self.dh, self.window = heads, kv_heads, d // heads, window
        self.q = nn.Linear(d, heads * self.dh, bias=False)
        self.k = nn.Linear(d, kv_heads * self.dh, bias=False)
        self.v = nn.Linear(d, kv_heads * self.dh, bias=False)
        self.o = nn.Linear(heads * self.dh, d, bias=False)

    def forward(self, x, cos, sin, past_k, past_v):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.h, self.dh).transpose(1, 2)
        k = self.k(x).view(b, s, self.kvh, self.dh).transpose(1, 2)
        v = self.v(x).view(b, s, self.kvh, self.dh).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        present_k, present_v = k, v
        t, rep = k.shape[2], self.h // self.kvh
        k = k[:, :, None].expand(b, self.kvh, rep, t, self.dh).reshape(b, self.h, t, self.dh)
        v = v[:, :, None].expand(b, self.kvh, rep, t, self.dh).reshape(b, self.h, t, self.dh)
        scores = MatMul()(q, k.transpose(-2, -1)) / math.sqrt(self.dh)
        mask = torch.full((s, t), float("-inf")).triu(t - s + 1)
        if self.window is not None:
            # Mistral's sliding window: query t - s + i sees only the `window` positions up
            # to itself; the product is still computed over all t (dense), the mask -inf.
            mask = mask + torch.full((s, t), float("-inf")).tril(t - s - self.window)
        y = MatMul()((scores + mask).softmax(-1), v)
        return self.o(y.transpose(1, 2).reshape(b, s, self.h * self.dh)), present_k, present_v


class DecoderBlock(nn.Module):
    def __init__(self, d, heads, kv_heads, ffn, window=None):
        super().__init__()
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.attn = DecoderAttention(d, heads, kv_heads, window)
        self.gate = nn.Linear(d, ffn, bias=False)
        self.up = nn.Linear(d, ffn, bias=False)
        self.down = nn.Linear(ffn, d, bias=False)

    def forward(self, x, cos, sin, past_k, past_v):
        a, k, v = self.attn(self.n1(x), cos, sin, past_k, past_v)
        x = x + a
        h = self.n2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h)), k, v


class LlamaDecoder(nn.Module):
    """Llama-style; with a `window`, Mistral-style (sliding-window causal mask)."""

    def __init__(self, blocks=2, d=128, heads=4, kv_heads=2, ffn=344, window=None):
        super().__init__()
        self.blocks = nn.ModuleList(DecoderBlock(d, heads, kv_heads, ffn, window)
                                    for _ in range(blocks))
        self.dh, self.kvh = d // heads, kv_heads

    def forward(self, x, *past):
        s, start = x.shape[1], past[0].shape[2]
        inv = 1.0 / (10000 ** (torch.arange(0, self.dh, 2).float() / self.dh))
        angles = (torch.arange(s).float() + start)[:, None] * inv[None, :]
        emb = torch.cat([angles, angles], -1)
        cos, sin = emb.cos(), emb.sin()
        present = []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, cos, sin, past[2 * i], past[2 * i + 1])
            present += [k, v]
        return (x, *present)


def export_decoder(model, seq=4, past=12, dynamic=True):
    """A decoder with the KV cache as inputs and outputs, batch, seq and past dynamic (only
    batch when not `dynamic`: a fixed-shape prefill or decode-step export)."""
    model.eval()
    n = len(model.blocks)
    d = model.blocks[0].attn.q.in_features
    kv = [torch.randn(1, model.kvh, past, model.dh) for _ in range(2 * n)]
    names = [f"past_{kind}{i}" for i in range(n) for kind in "kv"]
    outs = [f"present_{kind}{i}" for i in range(n) for kind in "kv"]
    axes = {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    axes.update({p: {0: "batch", 2: "past"} for p in names})
    axes.update({p: {0: "batch", 2: "total"} for p in outs})
    if not dynamic:
        axes = {k: {0: "batch"} for k in axes}
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, (torch.randn(1, seq, d), *kv), buf, opset_version=OPSET,
                          do_constant_folding=True, input_names=["x", *names],
                          output_names=["y", *outs], dynamic_axes=axes)
    m = onnx.load_from_string(buf.getvalue())
    del m.graph.value_info[:]
    return m


# --- a GPT-2-style decoder: LayerNorm, one fused QKV Linear split into q, k, v, a causal
# mask built from shapes, tanh-GELU MLP (4d), a learned position embedding added to the
# input embeddings, a final LayerNorm and an LM head; exported with a fixed sequence
# (only batch dynamic) and with batch and seq dynamic ---

class GPT2Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.act = nn.GELU(approximate="tanh")
        self.qk, self.av = MatMul(), MatMul()

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.c_attn(self.ln1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.h, self.dh).transpose(1, 2) for t in (q, k, v))
        scores = self.qk(q, k.transpose(-2, -1)) / math.sqrt(self.dh)
        mask = torch.full((s, s), float("-inf")).triu(1)
        y = self.av((scores + mask).softmax(-1), v).transpose(1, 2).reshape(b, s, d)
        x = x + self.c_proj(y)
        return x + self.proj(self.act(self.fc(self.ln2(x))))


class GPT2(nn.Module):
    def __init__(self, blocks=2, d=64, heads=4, positions=256, vocab=256):
        super().__init__()
        self.wpe = nn.Embedding(positions, d)
        self.blocks = nn.ModuleList(GPT2Block(d, heads) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, x):  # x: token embeddings [N, S, d]
        x = x + self.wpe(torch.arange(x.shape[1]))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


# --- a mixture-of-experts FFN block (Mixtral-style): RMSNorm, a router Linear, softmax,
# top-k of the experts with their weights renormalised, SwiGLU experts. As an ONNX graph
# without control flow it runs every expert on every token, stacks their outputs and
# gathers the k chosen per token (GatherElements), weighted and summed. Its MACs are
# therefore counted dense: the router plus every expert on every token ---

class SwiGLU(nn.Module):
    def __init__(self, d, ffn):
        super().__init__()
        self.gate = nn.Linear(d, ffn, bias=False)
        self.up = nn.Linear(d, ffn, bias=False)
        self.down = nn.Linear(ffn, d, bias=False)

    def forward(self, x):
        return self.down(nn.functional.silu(self.gate(x)) * self.up(x))


class MoEBlock(nn.Module):
    def __init__(self, d=64, experts=4, k=2, ffn=128):
        super().__init__()
        self.k = k
        self.norm = RMSNorm(d)
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(SwiGLU(d, ffn) for _ in range(experts))

    def forward(self, x):  # x: [N, S, d]
        h = self.norm(x)
        weights, chosen = self.router(h).softmax(-1).topk(self.k, dim=-1)  # [N, S, k]
        weights = weights / weights.sum(-1, keepdim=True)
        ys = torch.stack([e(h) for e in self.experts], dim=2)  # [N, S, E, d]
        idx = chosen[..., None].expand(-1, -1, -1, ys.shape[-1])
        picked = ys.gather(2, idx)  # [N, S, k, d]
        return x + (picked * weights[..., None]).sum(2)


class MoEStack(nn.Module):
    def __init__(self, blocks=2, **kw):
        super().__init__()
        self.blocks = nn.ModuleList(MoEBlock(**kw) for _ in range(blocks))

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


def export_lm(model, example, dynamic):
    """A model of [N, S, d] in and out ("x" -> "y"): batch dynamic, and seq too if `dynamic`."""
    model.eval()
    axes = {0: "batch", 1: "seq"} if dynamic else {0: "batch"}
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, example, buf, opset_version=OPSET, do_constant_folding=True,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": axes, "y": axes})
    m = onnx.load_from_string(buf.getvalue())
    del m.graph.value_info[:]
    return m


# --- independent MAC count (per sample) from module hooks ---

def count_macs(model, example):
    total = [0]
    n = example.shape[0]

    def conv(m, inp, out):  # Conv1d / 2d / 3d: out elements x in/groups x kernel volume
        total[0] += out.numel() // n * (m.in_channels // m.groups) * math.prod(m.kernel_size)

    def conv_transpose(m, inp, out):  # input elements x Cout/groups x kernel volume
        total[0] += inp[0].numel() // n * (m.out_channels // m.groups) * math.prod(m.kernel_size)

    def linear(m, inp, out):
        total[0] += out.numel() // n * m.in_features

    def matmul(m, inp, out):
        total[0] += out.numel() // n * inp[0].shape[-1]

    def einsum(m, inp, out):  # a matrix product: out elements x the summed letters' sizes
        lhs, rhs = m.equation.replace(" ", "").split("->")
        a, b = lhs.split(",")
        dims = dict(zip(a, inp[0].shape))
        dims.update(zip(b, inp[1].shape))
        total[0] += out.numel() // n * math.prod(dims[c] for c in set(a) & set(b) - set(rhs))

    def mha(m, inp, out):
        # packed in-projection (3 d^2 per token), QK^T and AV (S^2 d each), out-projection
        # (d^2 per token): F.multi_head_attention_forward calls these functionally, so no
        # Linear hook fires for them.
        s, d = inp[0].shape[1 if m.batch_first else 0], m.embed_dim
        total[0] += 4 * s * d * d + 2 * s * s * d

    def recurrent(m, inp, out):
        # gates x H x (I + H) per step, layer and direction: [x_t, h_t-1] x [W; R]
        gates = {nn.LSTM: 4, nn.GRU: 3, nn.RNN: 1}[type(m)]
        steps = inp[0].shape[1 if m.batch_first else 0]
        dirs = 2 if m.bidirectional else 1
        for layer in range(m.num_layers):
            i = m.input_size if layer == 0 else m.hidden_size * dirs
            total[0] += steps * dirs * gates * m.hidden_size * (i + m.hidden_size)

    def window_attention(m, inp, out):
        # torchvision's ShiftedWindowAttention calls F.linear on its qkv / proj weights:
        # 4 T C^2 for the projections and 2 T w^2 C for QK^T and AV over T (padded) tokens.
        _, h, w, c = inp[0].shape
        wh, ww = m.window_size
        t = math.ceil(h / wh) * wh * math.ceil(w / ww) * ww
        total[0] += 4 * t * c * c + 2 * t * wh * ww * c

    def partition_attention(m, inp, out):
        # torchvision's MaxViT attention (block or grid) over x [B, G, P, C]: G partitions of
        # P tokens; its QK^T and AV are torch.einsum calls no hook sees, 2 G P^2 C. Its
        # to_qkv and merge Linears have hooks of their own.
        _, g, p, c = inp[0].shape
        total[0] += 2 * g * p * p * c

    from torchvision.models.maxvit import RelativePositionalMultiHeadAttention
    from torchvision.models.swin_transformer import ShiftedWindowAttention
    hooks = []
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            hooks.append(m.register_forward_hook(conv))
        elif isinstance(m, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)):
            hooks.append(m.register_forward_hook(conv_transpose))
        elif isinstance(m, nn.Linear) and not isinstance(
                m, nn.modules.linear.NonDynamicallyQuantizableLinear):
            hooks.append(m.register_forward_hook(linear))
        elif isinstance(m, MatMul):
            hooks.append(m.register_forward_hook(matmul))
        elif isinstance(m, Einsum):
            hooks.append(m.register_forward_hook(einsum))
        elif isinstance(m, nn.MultiheadAttention):
            hooks.append(m.register_forward_hook(mha))
        elif isinstance(m, (nn.LSTM, nn.GRU, nn.RNN)):
            hooks.append(m.register_forward_hook(recurrent))
        elif isinstance(m, ShiftedWindowAttention):
            hooks.append(m.register_forward_hook(window_attention))
        elif isinstance(m, RelativePositionalMultiHeadAttention):
            hooks.append(m.register_forward_hook(partition_attention))
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
    """Turn every float initializer of more than 16 elements (and int64 one of more than 64)
    into a reference to a missing external file; dims stay, data goes. Integer shape
    constants stay inline."""
    for t in m.graph.initializer:
        elems = 1
        for d in t.dims:
            elems *= d
        is_float = t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16)
        # Integer tables (Swin's relative-position index) above the importer's 64-element
        # read limit go too.
        if (is_float and elems > 16) or (t.data_type == onnx.TensorProto.INT64 and elems > 64):
            size = elems * {onnx.TensorProto.FLOAT: 4, onnx.TensorProto.FLOAT16: 2}.get(
                t.data_type, 8)
            t.ClearField("raw_data")
            t.ClearField("float_data")
            del t.external_data[:]
            for key, value in (("location", missing_file), ("offset", "0"),
                               ("length", str(size))):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
            t.data_location = onnx.TensorProto.EXTERNAL
    return m


def shorten_names(m):
    """Rename every internal tensor to t<i> and every node to <op>_<i>: a graph of a few
    thousand shape-arithmetic nodes (Swin) is mostly its names."""
    keep = {v.name for v in list(m.graph.input) + list(m.graph.output)}
    names = {}

    def short(name):
        if not name or name in keep:
            return name
        return names.setdefault(name, "t%d" % len(names))

    for t in m.graph.initializer:
        t.name = short(t.name)
    for i, node in enumerate(m.graph.node):
        node.name = "%s_%d" % (node.op_type, i)
        for k, name in enumerate(node.input):
            node.input[k] = short(name)
        for k, name in enumerate(node.output):
            node.output[k] = short(name)
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
    # The method's own evaluation: FaceNet's Inception-ResNet-v1 (its case study uses two of
    # its blocks) and a 24-layer, d=1024, 16-head encoder at a static sequence length of 128.
    "inception_resnet_v1": (InceptionResnetV1, lambda: image(160)),
    "transformer_large": (lambda: Encoder(layers=24, d=1024, heads=16, ffn=4096),
                          lambda: torch.randn(1, 128, 1024)),
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
    # Operators beyond plain CNNs and encoders: window attention (computed pads, cyclic shifts), transposed
    # convolutions, 3-D convolution, recurrent layers, einsum; plus three more torchvision
    # families (hard-swish + SE, RegNet's grouped convs + SE, ConvNeXt's LayerNorm + 7x7
    # depthwise).
    "swin_small": (swin_small, lambda: image(112)),
    "unet_decoder": (UNetDecoder, lambda: image(64)),
    "dcgan_generator": (DCGANGenerator, lambda: torch.randn(1, 64, 1, 1)),
    "r3d_18": (lambda: tvm.video.r3d_18(weights=None), lambda: torch.randn(1, 3, 8, 56, 56)),
    "lstm": (lambda: Recurrent(nn.LSTM), lambda: torch.randn(1, 12, 16)),
    "gru": (lambda: Recurrent(nn.GRU), lambda: torch.randn(1, 12, 16)),
    "einsum_attention": (EinsumAttention, lambda: torch.randn(1, 32, 64)),
    "mobilenet_v3_small": (lambda: tvm.mobilenet_v3_small(weights=None), image),
    "regnet_y_400mf": (lambda: tvm.regnet_y_400mf(weights=None), image),
    "convnext_tiny": (lambda: tvm.convnext_tiny(weights=None), image),
    # Geometry of the other tensor ranks: a 3-D conv small enough to partition by hand and a
    # 1-D conv net whose residual Adds must read their producers' [C, L] layout.
    "conv3d_small": (lambda: nn.Conv3d(4, 8, 3, padding=1), lambda: torch.randn(1, 4, 8, 16, 16)),
    "conv1d_resnet": (Conv1dResNet, lambda: torch.randn(1, 4, 256)),
    # Workloads larger than the chip: a segmentation stem at 1024 x 2048 and a 2-block encoder
    # at sequence length 4096 (attention scores 8 x 4096 x 4096 per sample).
    "seg_stem_1024x2048": (SegStem, lambda: torch.randn(1, 3, 1024, 2048)),
    "encoder_seq4096": (lambda: Encoder(layers=2, d=512, heads=8, ffn=2048),
                        lambda: torch.randn(1, 4096, 512)),
    # MaxViT-T as torchvision builds it (MBConv + SE, block and grid attention with relative
    # position bias, 4 stages) at 224 x 224.
    "maxvit_t": (lambda: tvm.maxvit_t(weights=None), image),
}

# Exported with short tensor and node names (tests/data size).
SHORT_NAMES = {"swin_small", "maxvit_t"}

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
            m.weight.numel() for m in model.modules()
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)))
        m = strip_weights(export(model, example, keep_value_info), name + ".weights.bin")
        if name in SHORT_NAMES:
            m = shorten_names(m)
        size = write(m, os.path.join(outdir, name + ".onnx"), name)
        print(f"{name}: {size / 1024:.0f} KiB, {len(m.graph.node)} nodes, "
              f"MACs per sample (torch hooks) = {macs}, params (BN folded) = {params}")


# Decoders exported with their KV cache and dynamic axes (export_decoder).
DECODERS = {
    "llama_decoder": lambda: LlamaDecoder(blocks=2, d=128, heads=4, kv_heads=2, ffn=344),
    # Mistral-style: 8 query heads sharing 2 key/value heads, a sliding window of 16.
    "mistral_decoder": lambda: LlamaDecoder(blocks=2, d=128, heads=8, kv_heads=2, ffn=352,
                                            window=16),
}
# Fixed-shape exports of the same decoder, as `generate --prefill A --decode B` takes them:
# name -> (decoder, seq, past).
FIXED_DECODERS = {
    "llama_prefill64": ("llama_decoder", 64, 1),
    "llama_decode64": ("llama_decoder", 1, 64),
}


# Models of token embeddings [N, S, d] -> [N, S, d'] (export_lm): name -> (constructor,
# example, seq dynamic).
LANGUAGE_MODELS = {
    "gpt2_static": (GPT2, lambda: torch.randn(1, 32, 64), False),
    "gpt2_dynamic": (GPT2, lambda: torch.randn(1, 32, 64), True),
    "moe_ffn": (MoEStack, lambda: torch.randn(1, 16, 64), True),
}


def build_language_models(outdir, only):
    for name, (ctor, ex, dynamic) in LANGUAGE_MODELS.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        model, example = ctor().eval(), ex()
        macs = count_macs(model, example)
        m = strip_weights(export_lm(model, example, dynamic), name + ".weights.bin")
        size = write(m, os.path.join(outdir, name + ".onnx"), name)
        print(f"{name}: {size / 1024:.0f} KiB, {len(m.graph.node)} nodes, "
              f"MACs per sample (torch hooks, seq {example.shape[1]}) = {macs}")


# Attention at long context: one attention (explicit Q/K/V, QK^T, softmax, AV, output
# projection) whose scores at the full sequence would take gigabytes in torch's forward. It is
# exported at a short sequence, whose length the graph reads from its input's shape (Shape /
# Gather), then the input and output are declared at the long one; the importer's own shape
# propagation carries it through. name -> (d_model, heads, sequence).
LONG_CONTEXT = {
    # A tile of testchip (2 x 2, 1 MiB) cannot hold a quarter of one head's keys (512 KiB)
    # twice beside a block of query rows: no row blocking of the chain fits.
    "attention_seq32768": (64, 1, 32768),
    # Four heads in one MatMul each: a head's keys (2 MiB of K) cannot sit on a tile of
    # testchip, so QK^T, the softmax and AV stream key blocks within each head.
    "attention_heads4_seq16384": (256, 4, 16384),
}


def build_long_context(outdir, only):
    for name, (d, heads, seq) in LONG_CONTEXT.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        short = 64
        model, example = Attention(d, heads).eval(), torch.randn(1, short, d)
        # Per token: Q, K, V and output projections (4 d^2); QK^T and AV (2 S d).
        macs = 4 * seq * d * d + 2 * seq * seq * d
        assert count_macs(model, example) == 4 * short * d * d + 2 * short * short * d
        m = export(model, example, keep_value_info=False)
        for v in list(m.graph.input) + list(m.graph.output):
            v.type.tensor_type.shape.dim[1].dim_value = seq
        m = strip_weights(m, name + ".weights.bin")
        size = write(m, os.path.join(outdir, name + ".onnx"), name)
        print(f"{name}: {size / 1024:.0f} KiB, {len(m.graph.node)} nodes, "
              f"MACs per sample (formula, seq {seq}) = {macs}")


def build_decoders(outdir, only):
    for name, ctor in DECODERS.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        m = strip_weights(export_decoder(ctor()), name + ".weights.bin")
        size = write(m, os.path.join(outdir, name + ".onnx"), name)
        print(f"{name}: {size / 1024:.0f} KiB, {len(m.graph.node)} nodes")
    for name, (decoder, seq, past) in FIXED_DECODERS.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        m = export_decoder(DECODERS[decoder](), seq, past, dynamic=False)
        m = strip_weights(m, name + ".weights.bin")
        size = write(m, os.path.join(outdir, name + ".onnx"), name)
        print(f"{name}: {size / 1024:.0f} KiB, {len(m.graph.node)} nodes")


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
    build_decoders(os.path.join(REPO, "tests", "data"), args.only)
    build_language_models(os.path.join(REPO, "tests", "data"), args.only)
    build_long_context(os.path.join(REPO, "tests", "data"), args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
