// Recurrent layers of the ONNX importer: LSTM, GRU and RNN unrolled over a static sequence
// into one Gemm layer per direction and step (docs/import.md).
#include "model/onnx_importer.h"

#include <algorithm>

namespace tilescope::onnximport {

// Step t of direction d computes the gates of one sample, [x_t, h_(t-1)] (I + H values) times
// the stacked W and R weights (gates x H rows): a Gemm with one row, inC = I + H,
// outC = gates * H, whose inputs are x_t's share of X and the previous step (H values) --
// the recurrence is the dependency chain between the step layers. The gate nonlinearities
// and the cell update are element-wise on the gate outputs and fold into the step. Every
// step carries the weights it reads; Network::paramsCount counts them once.
Status Importer::makeRecurrent(const ox::NodeProto& n) {
    const std::string& op = n.op_type();
    const std::int64_t gates = op == "LSTM" ? 4 : (op == "GRU" ? 3 : 1);
    const auto xr = needShape(n, 0, "input X");
    if (!xr) return fail(xr);
    const auto wr = needShape(n, 1, "weight W");
    if (!wr) return fail(wr);
    const Shape& xs = *xr;
    const Shape& ws = *wr;
    if (xs.size() != 3 || ws.size() != 3) return fail("X and W must be 3-D");
    const bool batchFirst = attrInt(n, "layout", 0) != 0;
    const Dim seq = xs[batchFirst ? 1 : 0], batch = xs[batchFirst ? 0 : 1], inDim = xs[2];
    if (seq.v <= 0 || inDim.v <= 0) return fail("zero-sized input X " + toString(xs));
    if (seq.n || inDim.n)
        return fail("the batch is not where the layout puts it (X " + toString(xs) + ")");
    if (!(batch.n || batch.isConst(1)))
        return fail("the batch dimension of X " + toString(xs) + " is not the batch");
    const std::int64_t dirs = ws[0].v, hidden = attrInt(n, "hidden_size", ws[1].v / gates);
    if (dirs < 1 || dirs > 2 || hidden <= 0 || ws[1].v != gates * hidden || ws[2].v != inDim.v)
        return fail("W " + toString(ws) + " does not fit " + std::to_string(gates) +
                    " gates over input " + toString(xs));
    if (seq.v * dirs > 4096)
        return fail("a sequence of " + std::to_string(seq.v) + " steps is too long to unroll");
    Count weights = gates * hidden * (inDim.v + hidden); // W and R of one direction
    if (hasIn(n, 3)) weights += 2 * gates * hidden;      // Wb and Rb
    auto inC = narrow(inDim.v + hidden, "input + hidden size");
    if (!inC) return fail(inC);
    auto outC = narrow(gates * hidden, "gate size");
    if (!outC) return fail(outC);

    const Value& xv = in(n, 0);
    const Value& h0 = in(n, 5);
    std::vector<LayerInput> xShare = xv.parts;
    for (auto& p : xShare)
        p.bytesPerSample = std::max<Count>(1, p.bytesPerSample / seq.v);
    std::vector<LayerInput> all, last;
    std::vector<std::vector<LayerInput>> steps(size_t(seq.v));
    const bool stepped = xv.steps && std::int64_t(xv.steps->size()) == seq.v;
    const std::string base = nodeName(n);
    for (std::int64_t d = 0; d < dirs; ++d) {
        int prev = -1;
        for (std::int64_t s = 0; s < seq.v; ++s) {
            const bool reverse = attrString(n, "direction", "forward") == "reverse" || d == 1;
            const std::int64_t t = reverse ? seq.v - 1 - s : s;
            Layer l;
            l.kind = LayerKind::Gemm;
            l.op = op;
            l.name = base + (dirs > 1 ? "/d" + std::to_string(d) : "") + "/t" + std::to_string(t);
            for (int k = 2; m_usedNames.count(l.name); ++k)
                l.name += "_" + std::to_string(k);
            m_usedNames.insert(l.name);
            l.inC = *inC, l.outC = *outC;
            l.weightBytes = weights;
            l.inputs = stepped ? (*xv.steps)[size_t(t)] : xShare;
            if (prev >= 0)
                l.inputs.push_back(LayerInput{prev, "", hidden});
            else if (hasIn(n, 5) && !h0.isConst)
                l.inputs.insert(l.inputs.end(), h0.parts.begin(), h0.parts.end());
            if (s > 0) m_sharedWeightBytes += weights;
            prev = int(m_net.layers.size());
            m_net.layers.push_back(std::move(l));
            all.push_back(LayerInput{prev, "", hidden});
            steps[size_t(t)].push_back(LayerInput{prev, "", hidden});
        }
        last.push_back(LayerInput{prev, "", hidden});
    }
    // Y [S, dirs, N, H] (layout 0) or [N, S, dirs, H]; Y_h and Y_c [dirs, N, H].
    Value y, yh;
    y.shape = batchFirst ? Shape{batch, seq, Dim::of(dirs), Dim::of(hidden)}
                         : Shape{seq, Dim::of(dirs), batch, Dim::of(hidden)};
    y.parts = all;
    y.steps = std::move(steps);
    yh.shape = batchFirst ? Shape{batch, Dim::of(dirs), Dim::of(hidden)}
                          : Shape{Dim::of(dirs), batch, Dim::of(hidden)};
    yh.parts = last;
    setOutput(n, 0, std::move(y));
    setOutput(n, 1, yh);
    setOutput(n, 2, std::move(yh));
    return {};
}

} // namespace tilescope::onnximport
