// ONNX importer: the samples and torchvision test models against independent counts, the
// folding rules, weight-less vs embedded-weight twins, and every error path.
#include "model/onnx_import.h"
#include "util/fileio.h"

#include <QtTest>
#include <onnx/onnx_pb.h>
#include <random>
#include <set>
#include <variant>

using namespace tilescope;

namespace {

const QString kSamples = QStringLiteral(TILESCOPE_SAMPLES "/models/");
const QString kData = QStringLiteral(TILESCOPE_TESTDATA "/");

onnx::ModelProto loadProto(const QString& path) {
    onnx::ModelProto m;
    auto bytes = readFile(path.toStdString());
    if (bytes) m.ParseFromString(*bytes);
    return m;
}

Network mustImport(const std::string& bytes, const std::string& file,
                   const ImportOptions& opts = {}) {
    auto r = importOnnxBytes(bytes, file, opts);
    if (!r) qWarning("%s", r.error().message.c_str());
    return r ? *r : Network{};
}

QString importError(const onnx::ModelProto& m, const std::string& file,
                    const ImportOptions& opts = {}) {
    auto r = importOnnxBytes(m.SerializeAsString(), file, opts);
    return r ? QString() : QString::fromStdString(r.error().message);
}

int countKind(const Network& n, LayerKind k) {
    int c = 0;
    for (const auto& l : n.layers)
        c += l.kind == k ? 1 : 0;
    return c;
}

// Field-by-field equality of two imports (everything but the source path). Layers are
// matched by name; with sameOrder the topological order must be the same too (an unsorted
// file may legitimately yield another valid order).
void compareNetworks(const Network& a, const Network& b, bool sameOrder = true) {
    QCOMPARE(a.layers.size(), b.layers.size());
    auto producerName = [](const Network& n, const LayerInput& in) {
        return in.producer < 0 ? "input:" + in.networkInput : n.layers[size_t(in.producer)].name;
    };
    for (size_t i = 0; i < a.layers.size(); ++i) {
        const Layer& x = a.layers[i];
        const int j = b.indexOf(x.name);
        QVERIFY2(j >= 0, x.name.c_str());
        if (sameOrder) QCOMPARE(size_t(j), i);
        const Layer& y = b.layers[size_t(j)];
        QCOMPARE(x.kind, y.kind);
        QCOMPARE(x.op, y.op);
        QCOMPARE(std::vector<int>({x.inC, x.inH, x.inW, x.outC, x.outH, x.outW, x.kernelH,
                                   x.kernelW, x.strideH, x.strideW, x.padH, x.padW, x.dilationH,
                                   x.dilationW, x.groups}),
                 std::vector<int>({y.inC, y.inH, y.inW, y.outC, y.outH, y.outW, y.kernelH,
                                   y.kernelW, y.strideH, y.strideW, y.padH, y.padW, y.dilationH,
                                   y.dilationW, y.groups}));
        QCOMPARE(x.weightBytes, y.weightBytes);
        QCOMPARE(x.inputs.size(), y.inputs.size());
        for (size_t k = 0; k < x.inputs.size(); ++k) {
            QCOMPARE(producerName(a, x.inputs[k]), producerName(b, y.inputs[k]));
            QCOMPARE(x.inputs[k].bytesPerSample, y.inputs[k].bytesPerSample);
            QVERIFY(y.inputs[k].producer < j);
        }
    }
    QCOMPARE(a.folded.size(), b.folded.size());
    QCOMPARE(a.outputs, b.outputs);
    QCOMPARE(a.inputBytes, b.inputBytes);
    QCOMPARE(a.opCounts, b.opCounts);
    QCOMPARE(a.paramsCount, b.paramsCount);
}

// --- a tiny model builder over the ONNX protobuf API --------------------------------

using DimSpec = std::variant<std::int64_t, std::string>;

struct ModelBuilder {
    onnx::ModelProto m;
    onnx::GraphProto* g = m.mutable_graph();

    explicit ModelBuilder(std::int64_t opset = 17) {
        m.set_ir_version(8);
        m.set_producer_name("tst_onnximport");
        auto* o = m.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        g->set_name("test");
    }
    void input(const std::string& name, const std::vector<DimSpec>& dims) {
        auto* vi = g->add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        auto* shape = tt->mutable_shape();
        for (const auto& d : dims) {
            auto* dim = shape->add_dim();
            if (std::holds_alternative<std::int64_t>(d))
                dim->set_dim_value(std::get<0>(d));
            else
                dim->set_dim_param(std::get<1>(d));
        }
    }
    void output(const std::string& name) { g->add_output()->set_name(name); }
    void weight(const std::string& name, const std::vector<std::int64_t>& dims) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        std::int64_t n = 1;
        for (auto d : dims) {
            t->add_dims(d);
            n *= d;
        }
        t->set_raw_data(std::string(size_t(n) * 4, '\0'));
    }
    void ints(const std::string& name, const std::vector<std::int64_t>& values) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(std::int64_t(values.size()));
        for (auto v : values)
            t->add_int64_data(v);
    }
    onnx::NodeProto* node(const std::string& op, const std::string& name,
                          const std::vector<std::string>& in, const std::vector<std::string>& out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (const auto& s : in)
            n->add_input(s);
        for (const auto& s : out)
            n->add_output(s);
        return n;
    }
    static void attr(onnx::NodeProto* n, const std::string& name,
                     const std::vector<std::int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (auto x : v)
            a->add_ints(x);
    }
    // input [N, 3, H, W] -> 3x3 conv (pad 1) to 8 channels named `name`.
    onnx::NodeProto* conv(const std::string& name, const std::string& in, const std::string& out,
                          std::int64_t cin = 3, std::int64_t cout = 8) {
        weight(out + ".w", {cout, cin, 3, 3});
        auto* n = node("Conv", name, {in, out + ".w"}, {out});
        attr(n, "kernel_shape", {3, 3});
        attr(n, "pads", {1, 1, 1, 1});
        return n;
    }
    std::string bytes() const { return m.SerializeAsString(); }
};

} // namespace

class TestOnnxImport : public QObject {
    Q_OBJECT

  private slots:
    void samples_data();
    void samples();
    void torchvisionExtras_data();
    void torchvisionExtras();
    void resnet50Structure();
    void transformerAttention();
    void torchEncoderMergedBatchHeads();
    void foldingRules();
    void embeddedWeightsTwin();
    void noValueInfoAndUnsortedTwin();
    void namesUniqueAndSanitised();
    void fixedBatchExport();
    void foldedActivationOnInput();
    void badFiles_data();
    void badFiles();
    void badModels_data();
    void badModels();
    void unknownOpFallback();
    void transposedAnd3dConv();
    void shapeEvaluator();
    void recurrentUnrolled();
    void refusalsNameAlternatives();
    void workloadsLargerThanChip();
    void decoderDimensionsBoundByName();
    void decoderFreeDimensionsListed();
    void languageAndAttentionExportsExact_data();
    void languageAndAttentionExportsExact();
};

// Expected figures per sample at batch 1.
// MACs and params: printed by scripts/make_samples.py from torch forward hooks on the
// *torch* modules (Conv2d: out elements x in/groups x kh x kw; Linear: out elements x
// in_features; attention products out elements x K), i.e. independent of the ONNX graph.
// Params = torch parameters minus one BatchNorm vector per BN (its scale merges into the
// conv weights, its shift becomes the conv bias).
// Layer counts, by architecture (docs/import.md):
//   ResNet-50    53 conv + 1 FC + 2 pool (max, global avg) + 16 residual Add        = 72
//   GoogLeNet    57 conv (3 stem + 9 x 6) + 1 FC + 14 pool (4 max + 9 branch max + GAP) = 72
//   Inception-v3 94 conv + 1 FC + 14 pool (2 stem max, 9 branch avg, 2 reduction max, GAP) = 109
//   MobileNetV2  52 conv + 1 FC + 1 GAP + 10 residual Add                            = 64
//   Transformer  4 x (6 Linear + QK^T + AV + Softmax + 2 LayerNorm + 2 Add)         = 52
void TestOnnxImport::samples_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("layers");
    QTest::addColumn<QList<int>>("kinds"); // conv, gemm, matmul, pool, eltwise, vector
    QTest::addColumn<qint64>("macs");
    QTest::addColumn<qint64>("params");
    QTest::newRow("resnet50") << "resnet50.onnx" << 72 << QList<int>{53, 1, 0, 2, 16, 0}
                              << qint64(4089184256) << qint64(25530472);
    QTest::newRow("googlenet") << "googlenet.onnx" << 72 << QList<int>{57, 1, 0, 14, 0, 0}
                               << qint64(1498376192) << qint64(6617624);
    QTest::newRow("inception_v3") << "inception_v3.onnx" << 109 << QList<int>{94, 1, 0, 14, 0, 0}
                                  << qint64(5713216096) << qint64(23817352);
    QTest::newRow("mobilenet_v2") << "mobilenet_v2.onnx" << 64 << QList<int>{52, 1, 0, 1, 10, 0}
                                  << qint64(300774272) << qint64(3487816);
    // 4 x (4 S d^2 + 2 S^2 d + 2 S d ffn) = 4 x 419430400 with S=128, d=512, ffn=2048.
    QTest::newRow("transformer") << "transformer.onnx" << 52 << QList<int>{0, 24, 8, 0, 8, 12}
                                 << qint64(1677721600) << qint64(12609536);
    // 160 x 160: 132 conv (6 stem + 5 x 7 + 4 + 10 x 5 + 7 + 6 x 5) + 4 pools (3 max + GAP)
    // + 21 residual Add + F.normalize's Div (Eltwise) and ReduceL2 (Vector) + 1 FC.
    QTest::newRow("inception_resnet_v1")
        << "inception_resnet_v1.onnx" << 160 << QList<int>{132, 1, 0, 4, 22, 1}
        << qint64(1417662304) << qint64(23468336);
    // 24 x (4 S d^2 + 2 S^2 d + 2 S d ffn) with S=128, d=1024, 16 heads, ffn=4096.
    QTest::newRow("transformer_large")
        << "transformer_large.onnx" << 312 << QList<int>{0, 144, 48, 0, 48, 72}
        << qint64(39460012032) << qint64(302309376);
}

void TestOnnxImport::samples() {
    QFETCH(QString, file);
    QFETCH(int, layers);
    QFETCH(QList<int>, kinds);
    QFETCH(qint64, macs);
    QFETCH(qint64, params);
    const QString path = kSamples + file;
    auto r = importOnnx(path.toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    const Network& n = *r;
    QCOMPARE(int(n.layers.size()), layers);
    const QList<int> got{countKind(n, LayerKind::Conv),    countKind(n, LayerKind::Gemm),
                         countKind(n, LayerKind::MatMul),  countKind(n, LayerKind::Pool),
                         countKind(n, LayerKind::Eltwise), countKind(n, LayerKind::Vector)};
    QCOMPARE(got, kinds);
    QCOMPARE(qint64(n.totalMacsPerSample()), macs);
    QCOMPARE(qint64(n.paramsCount), params);
    QCOMPARE(n.name, QFileInfo(file).baseName().toStdString());
    QCOMPARE(n.sourcePath, path.toStdString());

    // Every ONNX node is either a scheduled layer or a fold record.
    const onnx::ModelProto m = loadProto(path);
    QCOMPARE(int(n.layers.size() + n.folded.size()), m.graph().node_size());
    int nodes = 0;
    for (const auto& [op, c] : n.opCounts)
        nodes += c;
    QCOMPARE(nodes, m.graph().node_size());
    // Topological order, known producers, consistent byte counts.
    for (size_t i = 0; i < n.layers.size(); ++i) {
        QVERIFY(!n.layers[i].inputs.empty());
        for (const auto& in : n.layers[i].inputs) {
            QVERIFY(in.producer < int(i));
            QVERIFY(in.bytesPerSample > 0);
            if (in.producer < 0)
                QVERIFY(n.inputBytes.count(in.networkInput));
            else
                QVERIFY(in.bytesPerSample <= n.layers[size_t(in.producer)].outputBytesPerSample());
        }
    }
    QCOMPARE(n.outputs.size(), size_t(1));
    QVERIFY(n.unsupported.empty());
}

// Architectures outside the samples, as torch 1.13 exports them (no value_info): MACs
// within 0.5% of the torch-hook count from scripts/make_samples.py.
void TestOnnxImport::torchvisionExtras_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<qint64>("torchMacs");
    struct Export {
        const char* what;
        const char* file;
        qint64 torchMacs;
    };
    const Export exports[] = {
        {"shufflenet_v2_x0_5 (channel shuffle)", "shufflenet_v2_x0_5.onnx", 40476448},
        {"squeezenet1_0 (Concat)", "squeezenet1_0.onnx", 818924576},
        {"densenet121 (Concat + BN)", "densenet121.onnx", 2834161664},
        {"vgg11 (Flatten + Gemm)", "vgg11.onnx", 7609090048},
        {"alexnet (Flatten + Gemm)", "alexnet.onnx", 714188480},
        {"mnasnet0_5 (depthwise, ReduceMean)", "mnasnet0_5.onnx", 104455968},
        {"efficientnet_b0 (SE, SiLU)", "efficientnet_b0.onnx", 385814752},
        // 2 x (4 S d^2 + 2 S^2 d + 2 S d ffn), S=16, d=64, ffn=128.
        {"torch TransformerEncoder", "torch_encoder.onnx", 1114112},
        // Window attention, transposed and 3-D convs, recurrent cells, Einsum (torch hooks +
        // formulas for the products no module hook sees).
        {"swin (window attention, shifted windows)", "swin_small.onnx", 103282944},
        {"U-Net decoder (ConvTranspose k2s2, k4s2p1)", "unet_decoder.onnx", 59572224},
        {"DCGAN generator (ConvTranspose from 1x1)", "dcgan_generator.onnx", 4718592},
        {"r3d_18 (3-D conv)", "r3d_18.onnx", 5180637184},
        {"LSTM (2 layers, bidirectional)", "lstm.onnx", 1039296},
        {"GRU (2 layers, bidirectional)", "gru.onnx", 781248},
        {"einsum attention", "einsum_attention.onnx", 655360},
        {"mobilenet_v3_small (hard-swish, SE)", "mobilenet_v3_small.onnx", 56510400},
        {"regnet_y_400mf (grouped, SE)", "regnet_y_400mf.onnx", 401842848},
        {"convnext_tiny (LayerNorm, 7x7 depthwise)", "convnext_tiny.onnx", 4455531264},
        {"Conv3d 4->8 k3 on 8x16x16", "conv3d_small.onnx", 1769472},
        {"1-D conv net (residual Conv1d blocks)", "conv1d_resnet.onnx", 835584},
        {"segmentation stem at 1024x2048", "seg_stem_1024x2048.onnx", 12532580352},
        // 2 x (4 S d^2 + 2 S^2 d + 2 S d ffn), S=4096, d=512, ffn=2048.
        {"encoder at sequence 4096", "encoder_seq4096.onnx", 60129542144},
        // 4 S d^2 + 2 S^2 d, S=32768, d=64 (exported at S=64, declared at 32768).
        {"attention at sequence 32768", "attention_seq32768.onnx", 137975824384},
    };
    for (const Export& e : exports)
        QTest::newRow(e.what) << QString(e.file) << e.torchMacs;
}

void TestOnnxImport::torchvisionExtras() {
    QFETCH(QString, file);
    QFETCH(qint64, torchMacs);
    const QString path = kData + file;
    QVERIFY(loadProto(path).graph().value_info_size() == 0); // our own propagation only
    auto r = importOnnx(path.toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    const double macs = double(r->totalMacsPerSample());
    QVERIFY2(std::abs(macs - double(torchMacs)) <= 0.005 * double(torchMacs),
             qPrintable(QString("importer %1 vs torch %2").arg(macs).arg(torchMacs)));
    for (const auto& l : r->layers) {
        QVERIFY(l.op != "Reshape" && l.op != "Transpose" && l.op != "Concat" && l.op != "Flatten" &&
                l.op != "Slice");
    }
}

void TestOnnxImport::resnet50Structure() {
    auto r = importOnnx((kSamples + "resnet50.onnx").toStdString());
    QVERIFY(r.ok());
    const Network& n = *r;
    const Layer& c1 = n.layers.front();
    QCOMPARE(c1.kind, LayerKind::Conv);
    // conv1: 7x7/2, pad 3 each side, 3 -> 64 channels, 224 -> 112.
    QCOMPARE(std::vector<int>({c1.inC, c1.inH, c1.inW, c1.outC, c1.outH, c1.outW, c1.kernelH,
                               c1.strideH, c1.padH}),
             std::vector<int>({3, 224, 224, 64, 112, 112, 7, 2, 6}));
    QCOMPARE(c1.weightBytes, Count(64 * 3 * 7 * 7 + 64)); // + the folded BN's bias
    QCOMPARE(c1.inputs.size(), size_t(1));
    QCOMPARE(c1.inputs[0].networkInput, std::string("input"));
    QCOMPARE(n.inputBytes.at("input"), Count(3 * 224 * 224));
    QCOMPARE(n.opCounts.at("Conv"), 53);
    QCOMPARE(n.opCounts.at("Relu"), 49);
    const Layer& fc = n.layers.back();
    QCOMPARE(fc.kind, LayerKind::Gemm);
    QCOMPARE(std::vector<int>({fc.inC, fc.outC, fc.outH, fc.outW}),
             std::vector<int>({2048, 1000, 1, 1}));
    QCOMPARE(fc.weightBytes, Count(2048 * 1000 + 1000));
    QCOMPARE(n.outputs, std::vector<std::string>{fc.name});
    // The GAP feeds the FC through the folded Flatten.
    QCOMPARE(n.layers[fc.inputs[0].producer].kind, LayerKind::Pool);
    // Residual Adds take two producers (the Relu after them folded).
    for (const auto& l : n.layers)
        if (l.kind == LayerKind::Eltwise) QCOMPARE(l.inputs.size(), size_t(2));
    int relusIntoAdd = 0;
    for (const auto& f : n.folded)
        if (f.op == "Relu" && n.layers[n.indexOf(f.into)].kind == LayerKind::Eltwise)
            ++relusIntoAdd;
    QCOMPARE(relusIntoAdd, 16);
}

void TestOnnxImport::transformerAttention() {
    auto r = importOnnx((kSamples + "transformer.onnx").toStdString());
    QVERIFY(r.ok());
    const Network& n = *r;
    const int q = n.indexOf("/layers.0/attn/q/MatMul");
    const int k = n.indexOf("/layers.0/attn/k/MatMul");
    const int v = n.indexOf("/layers.0/attn/v/MatMul");
    const int qk = n.indexOf("/layers.0/attn/qk/MatMul");
    const int sm = n.indexOf("/layers.0/attn/Softmax");
    const int av = n.indexOf("/layers.0/attn/av/MatMul");
    QVERIFY(q >= 0 && k >= 0 && v >= 0 && qk >= 0 && sm >= 0 && av >= 0);
    // Linear on [N, 128, 512]: rows -> outH, d -> inC, dout -> outC, weights + folded bias.
    const Layer& lq = n.layers[q];
    QCOMPARE(lq.kind, LayerKind::Gemm);
    QCOMPARE(std::vector<int>({lq.inC, lq.outC, lq.outH, lq.outW}),
             std::vector<int>({512, 512, 128, 1}));
    QCOMPARE(lq.weightBytes, Count(512 * 512 + 512));
    // QK^T: [N, 8, 128, 64] x [N, 8, 64, 128]: 8 groups, K = 64, 128 columns per head.
    const Layer& lqk = n.layers[qk];
    QCOMPARE(lqk.kind, LayerKind::MatMul);
    QCOMPARE(std::vector<int>({lqk.groups, lqk.inC, lqk.outC, lqk.outH, lqk.outW}),
             std::vector<int>({8, 8 * 64, 8 * 128, 128, 1}));
    QCOMPARE(lqk.weightBytes, Count(0));
    QCOMPARE(lqk.inputs.size(), size_t(2));
    QCOMPARE(lqk.inputs[0].producer, q);
    QCOMPARE(lqk.inputs[1].producer, k); // operand B: K (its Transpose folded)
    QCOMPARE(lqk.macsPerSample(), Count(128) * 128 * 512);
    QCOMPARE(n.layers[sm].kind, LayerKind::Vector);
    QCOMPARE(n.layers[sm].outputBytesPerSample(), Count(8 * 128 * 128));
    const Layer& lav = n.layers[av];
    QCOMPARE(lav.inputs[0].producer, sm);
    QCOMPARE(lav.inputs[1].producer, v);
    QCOMPARE(std::vector<int>({lav.groups, lav.inC, lav.outC, lav.outH}),
             std::vector<int>({8, 8 * 128, 8 * 64, 128}));
    // GELU (Div, Erf, Add, Mul, Mul) folds entirely into ff1.
    const int ff1 = n.indexOf("/layers.0/ff1/MatMul");
    int geluFolds = 0;
    for (const auto& f : n.folded)
        if (f.into == n.layers[ff1].name && f.node.find("/layers.0/act/") == 0) ++geluFolds;
    QCOMPARE(geluFolds, 5);
    QCOMPARE(n.layers[ff1 + 1].inputs[0].producer, ff1);
    QCOMPARE(n.layers[ff1 + 1].inputs[0].bytesPerSample, Count(128 * 2048));
}

void TestOnnxImport::torchEncoderMergedBatchHeads() {
    // torch's MultiheadAttention reshapes to [S, N*heads, dk] and runs bmm on
    // [N*heads, S, dk]: the batch is merged with the heads and must divide back out.
    auto r = importOnnx((kData + "torch_encoder.onnx").toStdString());
    QVERIFY(r.ok());
    const Network& n = *r;
    int matmuls = 0;
    for (const auto& l : n.layers) {
        if (l.kind != LayerKind::MatMul) continue;
        ++matmuls;
        QCOMPARE(l.groups, 4);
        QCOMPARE(l.outH, 16);
        QCOMPARE(l.inputs.size(), size_t(2));
        QCOMPARE(l.macsPerSample(), Count(16) * 16 * 64); // S^2 d
    }
    QCOMPARE(matmuls, 4);
    // The packed QKV projection feeds both operands of QK^T (each a third of it).
    const Layer& qk = n.layers[1];
    QCOMPARE(qk.kind, LayerKind::MatMul);
    QCOMPARE(qk.inputs[0].producer, 0);
    QCOMPARE(qk.inputs[1].producer, 0);
    QCOMPARE(qk.inputs[0].bytesPerSample, n.layers[0].outputBytesPerSample() / 3);
}

void TestOnnxImport::foldingRules() {
    // ShuffleNet: channel shuffle (Reshape/Transpose/Reshape) and the chunk Slices fold;
    // after the shuffle a branch reads half of each of the concat's producers.
    {
        auto r = importOnnx((kData + "shufflenet_v2_x0_5.onnx").toStdString());
        QVERIFY(r.ok());
        const Network& n = *r;
        const int b = n.indexOf("/stage2/stage2.1/branch2/branch2.0/Conv");
        QVERIFY(b >= 0);
        const Layer& l = n.layers[b];
        QCOMPARE(l.inputs.size(), size_t(2));
        QCOMPARE(l.inputs[0].bytesPerSample + l.inputs[1].bytesPerSample, Count(24 * 28 * 28));
        QCOMPARE(n.opCounts.at("Reshape"), 32);
        QCOMPARE(countKind(n, LayerKind::Pool), 2); // maxpool + x.mean([2, 3]) as global pool
    }
    // SqueezeNet: a Fire module's expand1x1 / expand3x3 outputs concatenate into the next
    // squeeze conv, which therefore has two producers with their own byte counts.
    {
        auto r = importOnnx((kData + "squeezenet1_0.onnx").toStdString());
        QVERIFY(r.ok());
        const Network& n = *r;
        const int s = n.indexOf("/features/features.4/squeeze/Conv");
        QVERIFY(s >= 0);
        const Layer& l = n.layers[s];
        QCOMPARE(l.inputs.size(), size_t(2));
        QCOMPARE(n.layers[l.inputs[0].producer].name,
                 std::string("/features/features.3/expand1x1/Conv"));
        QCOMPARE(n.layers[l.inputs[1].producer].name,
                 std::string("/features/features.3/expand3x3/Conv"));
        QCOMPARE(l.inputs[0].bytesPerSample,
                 Count(64 * 54 * 54)); // 224 -> 109 (7x7/2) -> 54 (3/2 ceil)
        QCOMPARE(l.inC, 128);
    }
    // VGG: Flatten folds, the first FC reads 512 x 7 x 7.
    {
        auto r = importOnnx((kData + "vgg11.onnx").toStdString());
        QVERIFY(r.ok());
        int firstFc = -1;
        for (size_t i = 0; i < r->layers.size() && firstFc < 0; ++i)
            if (r->layers[i].kind == LayerKind::Gemm) firstFc = int(i);
        QVERIFY(firstFc >= 0);
        QCOMPARE(r->layers[firstFc].inC, 25088);
        QCOMPARE(r->layers[firstFc].inputs[0].bytesPerSample, Count(25088));
    }
    // EfficientNet: depthwise convs, SiLU (x * sigmoid(x)) folds, SE's scale Mul is an
    // Eltwise of two different producers.
    {
        auto r = importOnnx((kData + "efficientnet_b0.onnx").toStdString());
        QVERIFY(r.ok());
        const Network& n = *r;
        int depthwise = 0, seMuls = 0;
        for (const auto& l : n.layers) {
            if (l.kind == LayerKind::Conv && l.groups > 1 && l.groups == l.inC) ++depthwise;
            if (l.kind == LayerKind::Eltwise && l.op == "Mul") ++seMuls;
        }
        QCOMPARE(depthwise, 16);
        QCOMPARE(seMuls, 16);
        QCOMPARE(countKind(n, LayerKind::Vector), 0);
    }
    // DenseNet: BN + ReLU after a multi-producer Concat cannot fold into one producer, so
    // they run as a Vector layer (the ReLU folds into it); after a single-input Concat
    // (each block's first layer) they fold.
    {
        auto r = importOnnx((kData + "densenet121.onnx").toStdString());
        QVERIFY(r.ok());
        // 62 standalone BNs - 4 after single-producer concats.
        QCOMPARE(countKind(*r, LayerKind::Vector), 58);
        for (const auto& l : r->layers)
            if (l.kind == LayerKind::Vector) QVERIFY(l.inputs.size() > 1);
    }
}

void TestOnnxImport::embeddedWeightsTwin() {
    // Same graph, once with weights as references to a missing external file (the sample)
    // and once with all weights embedded (built here): identical networks.
    const QString path = kSamples + "mobilenet_v2.onnx";
    onnx::ModelProto m = loadProto(path);
    int external = 0;
    for (auto& t : *m.mutable_graph()->mutable_initializer()) {
        if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
        ++external;
        std::int64_t e = 1;
        for (auto d : t.dims())
            e *= d;
        t.clear_external_data();
        t.set_data_location(onnx::TensorProto::DEFAULT);
        std::string raw(size_t(e) * 4, '\0');
        for (size_t i = 0; i < raw.size(); i += 4)
            raw[i + 3] = 0x3c; // ~0.0078f
        t.set_raw_data(std::move(raw));
    }
    QVERIFY(external > 50);
    const std::string withWeights = m.SerializeAsString();
    QVERIFY(withWeights.size() > 3'000'000 * 4); // 3.5 M parameters as floats
    const Network a = mustImport(*readFile(path.toStdString()), path.toStdString());
    const Network b = mustImport(withWeights, path.toStdString());
    QVERIFY(!a.layers.empty());
    compareNetworks(a, b);
}

void TestOnnxImport::noValueInfoAndUnsortedTwin() {
    // The committed samples carry value_info; the importer must not need it, nor a sorted
    // node list.
    for (const char* f : {"resnet50.onnx", "inception_v3.onnx", "transformer.onnx"}) {
        const QString path = kSamples + f;
        onnx::ModelProto m = loadProto(path);
        QVERIFY(m.graph().value_info_size() > 0);
        const Network a = mustImport(m.SerializeAsString(), path.toStdString());
        m.mutable_graph()->clear_value_info();
        auto* nodes = m.mutable_graph()->mutable_node();
        std::reverse(nodes->begin(), nodes->end());
        const Network b = mustImport(m.SerializeAsString(), path.toStdString());
        QVERIFY(!a.layers.empty());
        compareNetworks(a, b, /*sameOrder=*/false);
    }
}

void TestOnnxImport::namesUniqueAndSanitised() {
    ModelBuilder mb;
    mb.input("x", {std::string("batch"), 3, 8, 8});
    mb.conv("my conv", "x", "a");
    mb.conv("my conv", "a", "b", 8, 8); // duplicate name
    mb.conv("", "b", "c", 8, 8);        // no name
    mb.output("c");
    const Network n = mustImport(mb.bytes(), "names.onnx");
    QCOMPARE(n.layers.size(), size_t(3));
    std::set<std::string> names;
    for (const auto& l : n.layers) {
        QVERIFY(l.name.find_first_of(" \t\n") == std::string::npos);
        QVERIFY(!l.name.empty());
        names.insert(l.name);
    }
    QCOMPARE(names.size(), size_t(3));
    QCOMPARE(n.layers[0].name, std::string("my_conv"));
    QCOMPARE(n.layers[1].name, std::string("conv_1"));
    QCOMPARE(n.layers[2].name, std::string("conv_2"));
    QCOMPARE(n.outputs, std::vector<std::string>{"conv_2"});
}

void TestOnnxImport::fixedBatchExport() {
    // A batch-1 export with a hard-coded Reshape [1, -1] before a Gemm: still per sample.
    ModelBuilder mb;
    mb.input("x", {1, 3, 8, 8});
    mb.conv("c", "x", "a");
    mb.ints("shape", {1, -1});
    mb.node("Reshape", "flat", {"a", "shape"}, {"f"});
    mb.weight("fc.w", {10, 512});
    mb.weight("fc.b", {10});
    auto* g = mb.node("Gemm", "fc", {"f", "fc.w", "fc.b"}, {"y"});
    auto* a = g->add_attribute();
    a->set_name("transB");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
    mb.output("y");
    const Network n = mustImport(mb.bytes(), "fixed.onnx");
    QCOMPARE(n.layers.size(), size_t(2));
    const Layer& fc = n.layers[1];
    QCOMPARE(std::vector<int>({fc.inC, fc.outC, fc.outH}), std::vector<int>({512, 10, 1}));
    QCOMPARE(fc.weightBytes, Count(5130));
    QCOMPARE(fc.macsPerSample(), Count(5120));
    QCOMPARE(fc.inputs[0].bytesPerSample, Count(512));
}

void TestOnnxImport::foldedActivationOnInput() {
    // Relu straight on the network input folds into ""; a bias Add after a MatMul folds
    // into it and its bias becomes weights.
    ModelBuilder mb;
    mb.input("x", {std::string("N"), 16, 32});
    mb.node("Relu", "pre", {"x"}, {"r"});
    mb.weight("w", {32, 64});
    mb.weight("bias", {64});
    mb.node("MatMul", "lin", {"r", "w"}, {"m"});
    mb.node("Add", "lin_bias", {"m", "bias"}, {"y"});
    mb.output("y");
    const Network n = mustImport(mb.bytes(), "act.onnx");
    QCOMPARE(n.layers.size(), size_t(1));
    const Layer& l = n.layers[0];
    QCOMPARE(l.kind, LayerKind::Gemm);
    QCOMPARE(std::vector<int>({l.inC, l.outC, l.outH, l.outW}), std::vector<int>({32, 64, 16, 1}));
    QCOMPARE(l.weightBytes, Count(32 * 64 + 64));
    QCOMPARE(l.inputs[0].networkInput, std::string("x"));
    QCOMPARE(n.folded.size(), size_t(2));
    QCOMPARE(n.folded[0].node, std::string("pre"));
    QCOMPARE(n.folded[0].into, std::string(""));
    QCOMPARE(n.folded[1].node, std::string("lin_bias"));
    QCOMPARE(n.folded[1].into, std::string("lin"));
    QCOMPARE(n.inputBytes.at("x"), Count(16 * 32));
}

void TestOnnxImport::badFiles_data() {
    QTest::addColumn<QByteArray>("bytes");
    const auto sample = readFile((kSamples + "resnet50.onnx").toStdString());
    QByteArray full = QByteArray::fromStdString(*sample);
    QTest::newRow("truncated") << full.left(full.size() / 2);
    QTest::newRow("truncated by one byte") << full.left(full.size() - 1);
    std::mt19937 rng(42);
    QByteArray garbage(4096, '\0');
    for (auto& c : garbage)
        c = char(rng() & 0xff);
    QTest::newRow("garbage") << garbage;
    QTest::newRow("text") << QByteArray("this is not a model\n");
    QTest::newRow("empty") << QByteArray();
}

void TestOnnxImport::badFiles() {
    QFETCH(QByteArray, bytes);
    auto r = importOnnxBytes(bytes.toStdString(), "bad/model.onnx");
    QVERIFY(!r.ok());
    const QString msg = QString::fromStdString(r.error().message);
    QVERIFY2(msg.startsWith("bad/model.onnx: "), qPrintable(msg));
    QVERIFY2(msg.contains("not a valid ONNX model"), qPrintable(msg));

    // The same through a file (importOnnx parses from the file descriptor).
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/bad.onnx").toStdString();
    QVERIFY(!writeFileAtomic(path, bytes.toStdString()));
    auto f = importOnnx(path);
    QVERIFY(!f.ok());
    QCOMPARE(QString::fromStdString(f.error().message),
             QString::fromStdString(path + ": not a valid ONNX model (protobuf parse failed)"));
}

// A bad-model row: mb with `output` as the graph's output, and what the message must name.
void addBadModel(const char* row, ModelBuilder& mb, const std::string& output,
                 const QStringList& mustContain) {
    mb.output(output);
    QTest::newRow(row) << QByteArray::fromStdString(mb.bytes()) << mustContain;
}

// The bytes of a model whose one conv `conv` reads input "x" of `dims`, built by `mb`
// (an opset or IR version of its own where a case needs one).
QByteArray oneConvModel(ModelBuilder mb, const std::vector<DimSpec>& dims,
                        const std::string& conv = "conv1") {
    mb.input("x", dims);
    mb.conv(conv, "x", "y");
    mb.output("y");
    return QByteArray::fromStdString(mb.bytes());
}

void TestOnnxImport::badModels_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QStringList>("mustContain");

    QTest::newRow("opset 18") << oneConvModel(ModelBuilder(18), {std::string("N"), 3, 8, 8}, "c")
                              << QStringList{"opset 18", "supported (17)"};
    {
        ModelBuilder mb;
        mb.m.set_ir_version(99);
        QTest::newRow("ir_version 99")
            << oneConvModel(mb, {std::string("N"), 3, 8, 8}, "c") << QStringList{"ir_version 99"};
    }
    {
        ModelBuilder mb;
        mb.input("x", {std::string("N"), 3, 8, 8});
        mb.conv("c1", "x", "a");
        mb.node("FancyOp", "fancy", {"a"}, {"b"});
        mb.conv("c2", "b", "y", 8, 8);
        addBadModel("unsupported op", mb, "y",
                    QStringList{"node 'fancy' (FancyOp): unsupported operator"});
    }
    QTest::newRow("free H and W unbound")
        << oneConvModel(ModelBuilder(),
                        {std::string("N"), 3, std::string("height"), std::string("width")})
        << QStringList{"input 'x' axis 2",
                       "free dimensions height (input 'x' axis 2), width (input 'x' axis 3) left "
                       "unbound",
                       "--dim NAME=VALUE"};
    QTest::newRow("fixed batch 8") << oneConvModel(ModelBuilder(), {8, 3, 8, 8})
                                   << QStringList{"input 'x'", "fixed batch size 8"};
    QTest::newRow("zero-sized dim") << oneConvModel(ModelBuilder(), {std::string("N"), 3, 0, 8})
                                    << QStringList{"input 'x'", "dimension 2 is zero-sized"};
    {
        ModelBuilder mb;
        mb.input("x", {std::string("N"), 3, 2, 2});
        mb.weight("w", {8, 3, 5, 5});
        mb.node("Conv", "big", {"x", "w"}, {"y"});
        addBadModel("kernel larger than input", mb, "y",
                    QStringList{"node 'big' (Conv)", "zero-sized output"});
    }
    {
        // Reshape whose target comes from a non-constant (a network input): the conv after
        // it cannot be sized; the message names the conv and the Reshape.
        ModelBuilder mb;
        mb.input("x", {std::string("N"), 3, 8, 8});
        mb.input("shape", {4});
        mb.node("Reshape", "reshape_dyn", {"x", "shape"}, {"r"});
        mb.conv("after", "r", "y");
        addBadModel("non-constant reshape", mb, "y",
                    QStringList{"node 'after' (Conv)", "unknown shape", "reshape_dyn"});
    }
    {
        ModelBuilder mb;
        mb.input("x", {std::string("N"), 3, 8, 8});
        mb.conv("c", "nowhere", "y");
        addBadModel("dangling input", mb, "y", QStringList{"node 'c' (Conv)", "'nowhere'"});
    }
    // The conv's weight expects 3 input channels.
    QTest::newRow("channel mismatch")
        << oneConvModel(ModelBuilder(), {std::string("N"), 4, 8, 8}, "c")
        << QStringList{"node 'c' (Conv)", "input has 4"};
    {
        // A graph input without a type feeding Shape: libonnx 1.12's Shape-15 data
        // propagator read the missing type and crashed (found by fuzz_onnx). Now the
        // importer reports the layer it cannot size.
        ModelBuilder mb;
        mb.g->add_input()->set_name("x");
        mb.node("Shape", "shape", {"x"}, {"s"});
        mb.node("Reshape", "reshape", {"x", "s"}, {"r"});
        mb.weight("w", {4, 4});
        mb.node("MatMul", "matmul", {"r", "w"}, {"y"});
        addBadModel("untyped input into Shape", mb, "y",
                    QStringList{"node 'matmul' (MatMul)", "unknown shape", "reshape"});
    }
    {
        // A Slice with fewer axes than starts: the importer read past the axes (found by
        // fuzz_onnx; tests/data/fuzz-regressions/onnx/slice-short-axes.onnx).
        ModelBuilder mb;
        mb.input("x", {std::string("N"), 3, 8, 8});
        mb.ints("starts", {0, 0});
        mb.ints("ends", {1, 4});
        mb.ints("axes", {1});
        mb.node("Slice", "short_axes", {"x", "starts", "ends", "axes"}, {"y"});
        mb.conv("c", "y", "z", 1, 8);
        addBadModel(
            "slice axes shorter than starts", mb, "z",
            QStringList{"node 'short_axes' (Slice)", "axes (1) and starts (2) differ in length"});
    }
}

void TestOnnxImport::badModels() {
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, mustContain);
    auto r = importOnnxBytes(bytes.toStdString(), "models/bad.onnx");
    QVERIFY(!r.ok());
    const QString msg = QString::fromStdString(r.error().message);
    QVERIFY2(msg.startsWith("models/bad.onnx: "), qPrintable(msg));
    for (const auto& s : mustContain)
        QVERIFY2(msg.contains(s), qPrintable(msg + " lacks " + s));
}

void TestOnnxImport::unknownOpFallback() {
    ModelBuilder mb;
    mb.input("x", {std::string("N"), 3, 8, 8});
    mb.conv("c1", "x", "a");
    mb.node("FancyOp", "fancy", {"a"}, {"b"});
    mb.conv("c2", "b", "y", 8, 8);
    mb.output("y");
    const std::string bytes = mb.bytes();
    {
        ImportOptions o;
        o.unknownOpFallback = "vector";
        const Network n = mustImport(bytes, "f.onnx", o);
        QCOMPARE(n.layers.size(), size_t(3));
        QCOMPARE(n.layers[1].kind, LayerKind::Vector);
        QCOMPARE(n.layers[1].outputBytesPerSample(), Count(8 * 8 * 8));
        QCOMPARE(n.layers[2].inputs[0].producer, 1);
        QCOMPARE(n.unsupported, std::vector<std::string>{"fancy (FancyOp)"});
    }
    {
        ImportOptions o;
        o.unknownOpFallback = "eltwise";
        const Network n = mustImport(bytes, "f.onnx", o);
        QCOMPARE(n.layers[1].kind, LayerKind::Eltwise);
    }
    {
        ImportOptions o;
        o.unknownOpFallback = "fold";
        const Network n = mustImport(bytes, "f.onnx", o);
        QCOMPARE(n.layers.size(), size_t(2));
        QCOMPARE(n.layers[1].inputs[0].producer, 0);
        QCOMPARE(n.unsupported, std::vector<std::string>{"fancy (FancyOp)"});
        QCOMPARE(n.folded.back().into, n.layers[0].name);
    }
    {
        ImportOptions o;
        o.unknownOpFallback = "conv";
        auto r = importOnnxBytes(bytes, "f.onnx", o);
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(r.error().message).contains("node 'fancy' (FancyOp)"));
    }
}

void TestOnnxImport::transposedAnd3dConv() {
    // ConvTranspose k2 s2: the sub-pixel form, 4 phases of a 1x1 conv over the input.
    {
        ModelBuilder mb;
        mb.input("x", {std::string("N"), 8, 5, 5});
        mb.weight("w", {8, 4, 2, 2});
        auto* n = mb.node("ConvTranspose", "up", {"x", "w"}, {"y"});
        ModelBuilder::attr(n, "strides", {2, 2});
        mb.output("y");
        const Network net = mustImport(mb.bytes(), "t.onnx");
        QCOMPARE(net.layers.size(), size_t(1));
        const Layer& l = net.layers[0];
        QCOMPARE(l.kind, LayerKind::Conv);
        QCOMPARE(std::vector<int>({l.inC, l.inH, l.outC, l.outH, l.outW, l.kernelH}),
                 std::vector<int>({8, 5, 16, 5, 5, 1}));
        QCOMPARE(l.macsPerSample(), Count(8 * 25 * 4 * 4)); // in elements x Cout x k^2
        QCOMPARE(l.outputBytesPerSample(), Count(4 * 10 * 10));
        QCOMPARE(l.weightBytes, Count(8 * 4 * 2 * 2));
    }
    // From a 1x1 latent (k4 s1): the scatter form (1x1 conv to Cout x 16), exact MACs.
    {
        ModelBuilder mb;
        mb.input("z", {std::string("N"), 16, 1, 1});
        mb.weight("w", {16, 8, 4, 4});
        mb.node("ConvTranspose", "proj", {"z", "w"}, {"y"});
        mb.output("y");
        const Network net = mustImport(mb.bytes(), "t.onnx");
        QCOMPARE(net.layers.size(), size_t(1));
        QCOMPARE(net.layers[0].macsPerSample(), Count(16 * 8 * 16));
        QCOMPARE(net.layers[0].outputBytesPerSample(), Count(8 * 4 * 4));
    }
    // Conv 3-D, 3x3x3, pad 1: depth folds into the height axis.
    {
        ModelBuilder mb;
        mb.input("x", {std::string("N"), 2, 4, 6, 6});
        mb.weight("w", {3, 2, 3, 3, 3});
        auto* n = mb.node("Conv", "c3", {"x", "w"}, {"y"});
        ModelBuilder::attr(n, "pads", {1, 1, 1, 1, 1, 1});
        mb.node("Relu", "r", {"y"}, {"z"});
        mb.output("z");
        const Network net = mustImport(mb.bytes(), "t.onnx");
        QCOMPARE(net.layers.size(), size_t(1));
        const Layer& l = net.layers[0];
        QCOMPARE(std::vector<int>({l.inH, l.inW, l.outH, l.outW, l.kernelH, l.kernelW}),
                 std::vector<int>({24, 6, 24, 6, 9, 3}));
        QCOMPARE(l.macsPerSample(), Count(3 * 4 * 6 * 6 * 2 * 27));
    }
}

void TestOnnxImport::shapeEvaluator() {
    // torch's F.pad with computed pads: [0,0, 0,0, 0,1, 0,1] built as a Concat, reversed in
    // pairs (Reshape [-1,2], Slice step -1, Transpose, Reshape [-1]), then a Reshape whose
    // target is [N, 4, H / 7 * 7 ... ] computed from Shape -> Gather -> Div -> Mul.
    ModelBuilder mb;
    mb.input("x", {std::string("N"), 4, 6, 6});
    mb.ints("p0", {0, 1, 0, 1}); // F.pad's (w0, w1, h0, h1), padded to 8 with zeros
    mb.ints("p1", {0, 0, 0, 0});
    mb.node("Concat", "cat", {"p0", "p1"}, {"pl"})->add_attribute()->CopyFrom([] {
        onnx::AttributeProto a;
        a.set_name("axis");
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(0);
        return a;
    }());
    mb.ints("m12", {-1, 2});
    mb.node("Reshape", "r1", {"pl", "m12"}, {"pairs"});
    mb.ints("s", {-1});
    mb.ints("e", {-9223372036854775807LL});
    mb.ints("a", {0});
    mb.ints("st", {-1});
    mb.node("Slice", "rev", {"pairs", "s", "e", "a", "st"}, {"rpairs"});
    ModelBuilder::attr(mb.node("Transpose", "tr", {"rpairs"}, {"tpairs"}), "perm", {1, 0});
    mb.ints("m1", {-1});
    mb.node("Reshape", "r2", {"tpairs", "m1"}, {"pads"});
    mb.node("Pad", "pad", {"x", "pads"}, {"xp"}); // -> [N, 4, 7, 7]
    // target [N, 4, 7 / 7, 49]: Shape -> Gather(2) -> Div 7 -> Unsqueeze -> Concat
    mb.node("Shape", "sh", {"xp"}, {"shp"});
    mb.ints("i0", {0});
    mb.ints("i1", {1});
    mb.ints("i2", {2});
    mb.node("Gather", "g0", {"shp", "i0"}, {"n"});
    mb.node("Gather", "g1", {"shp", "i1"}, {"c"});
    mb.node("Gather", "g2", {"shp", "i2"}, {"h"});
    mb.ints("seven", {7});
    mb.node("Div", "dv", {"h", "seven"}, {"hw"});
    mb.node("Mul", "ml", {"seven", "seven"}, {"w49"});
    mb.node("Concat", "tgt", {"n", "c", "hw", "w49"}, {"target"})->add_attribute()->CopyFrom([] {
        onnx::AttributeProto a;
        a.set_name("axis");
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(0);
        return a;
    }());
    mb.node("Reshape", "rs", {"xp", "target"}, {"y"});
    mb.node("Softmax", "sm", {"y"}, {"out"});
    mb.output("out");
    auto r = importOnnxBytes(mb.bytes(), "e.onnx");
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->layers.size(), size_t(1));
    const Layer& l = r->layers[0];
    QCOMPARE(l.kind, LayerKind::Vector);
    QCOMPARE(l.outputBytesPerSample(), Count(4 * 49)); // [4, 1, 49] per sample
}

void TestOnnxImport::recurrentUnrolled() {
    auto r = importOnnx((kData + "lstm.onnx").toStdString());
    QVERIFY(r.ok());
    const Network& n = *r;
    // emb + 2 layers x 2 directions x 12 steps + head; torch's parameter count (shared
    // step weights counted once).
    QCOMPARE(n.layers.size(), size_t(50));
    QCOMPARE(n.paramsCount, Count(89066));
    const int t1 = n.indexOf("/rnn/LSTM/d0/t1"), t0 = n.indexOf("/rnn/LSTM/d0/t0");
    QVERIFY(t0 >= 0 && t1 > t0);
    const Layer& s = n.layers[size_t(t1)];
    QCOMPARE(s.kind, LayerKind::Gemm);
    QCOMPARE(std::vector<int>({s.inC, s.outC, s.outH}), std::vector<int>({32 + 48, 4 * 48, 1}));
    QCOMPARE(s.inputs.back().producer, t0); // the recurrence
    // The backward direction runs from the last step.
    const int b0 = n.indexOf("/rnn/LSTM/d1/t0"), b1 = n.indexOf("/rnn/LSTM/d1/t1");
    QVERIFY(b1 >= 0 && b0 > b1);
    // The stacked layer's step 3 reads step 3 of both directions below.
    const Layer& up = n.layers[size_t(n.indexOf("/rnn/LSTM_1/d0/t3"))];
    std::set<std::string> from;
    for (const auto& in : up.inputs)
        from.insert(n.layers[size_t(in.producer)].name);
    QVERIFY(from.count("/rnn/LSTM/d0/t3") && from.count("/rnn/LSTM/d1/t3"));
    QCOMPARE(up.inC, 96 + 48);
}

void TestOnnxImport::refusalsNameAlternatives() {
    {
        ModelBuilder mb;
        mb.input("x", {std::string("N"), 3, 8, 8});
        mb.conv("c1", "x", "a");
        mb.node("NonZero", "nz", {"a"}, {"b"});
        mb.output("b");
        auto r = importOnnxBytes(mb.bytes(), "f.onnx");
        QVERIFY(!r.ok());
        const QString msg = QString::fromStdString(r.error().message);
        QVERIFY2(msg.contains("f.onnx: node 'nz' (NonZero): unsupported operator; nearest "
                              "supported: cut the graph before post-processing") &&
                     msg.contains("fallback"),
                 qPrintable(msg));
    }
    {
        ModelBuilder mb;
        mb.input("x", {std::string("N"), 8, 8});
        mb.input("y", {std::string("N"), 8, 8});
        auto* n = mb.node("Einsum", "tr", {"x", "y"}, {"z"});
        auto* a = n->add_attribute();
        a->set_name("equation");
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s("nij,njk->nk"); // sums over A's own i: not a product
        mb.output("z");
        auto r = importOnnxBytes(mb.bytes(), "f.onnx");
        QVERIFY(!r.ok());
        const QString msg = QString::fromStdString(r.error().message);
        QVERIFY2(msg.contains("node 'tr' (Einsum)") && msg.contains("nearest supported: MatMul"),
                 qPrintable(msg));
    }
}

// The models of workloads larger than any chip's buffers import with the shapes they are
// meant to have: the stem's maps (32 x 512 x 1024 after the first conv: 16 MB per sample)
// and the encoder's attention scores, 8 heads x 4096 x 4096 per sample.
void TestOnnxImport::workloadsLargerThanChip() {
    auto stem = importOnnx((kData + "seg_stem_1024x2048.onnx").toStdString());
    QVERIFY2(stem.ok(), stem.ok() ? "" : stem.error().message.c_str());
    QCOMPARE(stem->layers.size(), size_t(4));
    QCOMPARE(countKind(*stem, LayerKind::Conv), 4);
    const Layer& first = stem->layers[0];
    QCOMPARE(
        std::vector<int>({first.inC, first.inH, first.inW, first.outC, first.outH, first.outW}),
        std::vector<int>({3, 1024, 2048, 32, 512, 1024}));
    const Layer& last = stem->layers[3];
    QCOMPARE(std::vector<int>({last.outC, last.outH, last.outW}), std::vector<int>({64, 256, 512}));

    auto enc = importOnnx((kData + "encoder_seq4096.onnx").toStdString());
    QVERIFY2(enc.ok(), enc.ok() ? "" : enc.error().message.c_str());
    // 2 x (6 Linear + QK^T + AV + Softmax + 2 LayerNorm + 2 Add)
    QCOMPARE(enc->layers.size(), size_t(26));
    QCOMPARE(countKind(*enc, LayerKind::MatMul), 4);
    int scores = 0;
    for (const Layer& l : enc->layers) {
        if (l.kind != LayerKind::MatMul || l.name.find("/qk/") == std::string::npos) continue;
        QCOMPARE(l.groups, 8);
        QCOMPARE(l.outH, 4096);
        QCOMPARE(l.outC, 8 * 4096);
        QCOMPARE(l.outputBytesPerSample(), Count(8) * 4096 * 4096);
        ++scores;
    }
    QCOMPARE(scores, 2);
}

// The Llama-style decoder of tests/data (scripts/make_samples.py: 2 blocks, d 128, 4 query
// heads sharing 2 key/value heads, SwiGLU FFN 344, RMSNorm, rotary embeddings, a causal
// mask built from shapes; past keys and values in, present ones out; batch, seq and past
// dynamic). Per block with S new tokens over T = S + past positions, by hand:
//   q, o 2 x S d^2; k, v 2 x S d (2 x 32); QK^T and AV 2 x 4 heads x S T 32; FFN 3 S d 344.
// seq 64, past 192 (prefill-sized): 2 x (4,194,304 + 1,048,576 + 4,194,304 + 8,454,144 +
// 0) = 31,588,352 MACs; seq 1, past 255 (a decode step): 493,568.
void TestOnnxImport::decoderDimensionsBoundByName() {
    const std::string path = (kData + "llama_decoder.onnx").toStdString();
    auto macsOf = [](Count s, Count past) {
        const Count d = 128, heads = 4, dh = 32, kvHeads = 2, ffn = 344, t = s + past;
        return 2 * (2 * s * d * d + 2 * s * d * kvHeads * dh + 2 * heads * s * t * dh +
                    3 * s * d * ffn);
    };
    QCOMPARE(macsOf(64, 192), Count(31588352));
    for (const auto& [seq, past] : {std::pair(64, 192), std::pair(1, 255)}) {
        ImportOptions o;
        o.dims = {{"seq", seq}, {"past", past}};
        auto net = importOnnx(path, o);
        QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
        QCOMPARE(net->totalMacsPerSample(), macsOf(seq, past));
        // 2 x (q, k, v, o, QK^T, AV, gate, up, down + softmax, 2 RMSNorm, SwiGLU product,
        // 2 residual Adds and the rotary and mask arithmetic on the vector unit)
        QCOMPARE(countKind(*net, LayerKind::MatMul), 4);
        QCOMPARE(net->dims, (std::map<std::string, std::int64_t>{{"past", past}, {"seq", seq}}));
        // The KV cache: past keys and values are inputs of seq x past elements per sample.
        QCOMPARE(net->inputBytes.at("past_k0"), Count(2 * past * 32));
    }
}

// A free dimension left unbound is an error that lists them all, with where they are; a
// name the model does not have, and the batch axis, are refused with the reason.
void TestOnnxImport::decoderFreeDimensionsListed() {
    const std::string path = (kData + "llama_decoder.onnx").toStdString();
    auto free = freeDimensions(path);
    QVERIFY(free.ok());
    QCOMPARE(free->size(), size_t(2));
    QCOMPARE((*free)[0].name, std::string("seq"));
    QCOMPARE((*free)[1].name, std::string("past"));
    QCOMPARE((*free)[1].input, std::string("past_k0"));
    QCOMPARE((*free)[1].axis, 2);
    auto none = importOnnx(path);
    QVERIFY(!none.ok());
    QVERIFY2(none.error().message.find("free dimensions seq (input 'x' axis 1), past (input "
                                       "'past_k0' axis 2) left unbound") != std::string::npos,
             none.error().message.c_str());
    ImportOptions o;
    o.dims = {{"seq", 8}, {"past", 8}, {"tokens", 8}};
    auto wrong = importOnnx(path, o);
    QVERIFY(!wrong.ok());
    QVERIFY2(wrong.error().message.find("'tokens': the model has no free dimension of that name "
                                        "(its free dimensions: seq, past)") != std::string::npos,
             wrong.error().message.c_str());
    o.dims = {{"seq", 8}, {"past", 8}, {"batch", 4}};
    auto batch = importOnnx(path, o);
    QVERIFY(!batch.ok());
    QVERIFY2(batch.error().message.find("is the batch axis") != std::string::npos,
             batch.error().message.c_str());
    QVERIFY(!parseDimBinding("seq").ok());
    QVERIFY(!parseDimBinding("seq=0").ok());
    QVERIFY(!parseDimBinding("=4").ok());
    QCOMPARE(parseDimBinding("seq=2048")->second, std::int64_t(2048));
    auto stat = freeDimensions((kData + "vgg11.onnx").toStdString());
    QVERIFY(stat.ok() && stat->empty());
}

// Decoder LLM and attention-model exports of scripts/make_samples.py, static and with their
// free dimensions bound: MACs exactly the count derived by hand (each formula below; the
// script's torch-hook count agrees at the exported size). MACs are those of the matrix
// products (Linear, MatMul, Einsum, Conv); softmax, norms, masks, the routing weights'
// scaling and sums are vector and element-wise work. Per block with S tokens:
//   GPT-2 (fused QKV Linear + split, causal mask, 4d GELU MLP): 12 S d^2 + 2 S^2 d, plus
//     the LM head S d V; d 64, 4 heads, 2 blocks, V 256.
//   Mistral (GQA 8 query / 2 key-value heads of 16, sliding window 16, SwiGLU 352, rotary):
//     as Llama, over T = S + past positions: the window is a mask on the dense product.
//   MoE FFN (router, softmax, top-2 of 4 SwiGLU experts gathered per token): the graph runs
//     every expert on every token, so the dense count, S d E + E 3 S d ffn; d 64, ffn 128.
//   MaxViT-T at 224^2 (torchvision, weights=None): the hooks' Conv2d / Linear count
//     5,381,025,792 plus the block and grid attention products torch.einsum computes, which
//     no module hook sees: 2 T P^2 C per attention over T tokens in partitions of P^2 = 49,
//     2 attentions per layer, layers 2/2/5/2 at 56^2/28^2/14^2/7^2 with C 64/128/256/512:
//     4 x 19,668,992 + 4 x 9,834,496 + 10 x 4,917,248 + 4 x 2,458,624 = 177,020,928
//     (3.29% of the rest: a reference count without them reads the importer as 3.3% high).
void TestOnnxImport::languageAndAttentionExportsExact_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<qint64>("seq");
    QTest::addColumn<qint64>("past");
    QTest::addColumn<qint64>("macs");
    auto gpt2 = [](qint64 s) {
        const qint64 d = 64, vocab = 256;
        return 2 * (12 * s * d * d + 2 * s * s * d) + s * d * vocab;
    };
    auto mistral = [](qint64 s, qint64 past) {
        const qint64 d = 128, heads = 8, dh = 16, kvHeads = 2, ffn = 352, t = s + past;
        return 2 * (2 * s * d * d + 2 * s * d * kvHeads * dh + 2 * heads * s * t * dh +
                    3 * s * d * ffn);
    };
    auto moe = [](qint64 s) {
        const qint64 d = 64, experts = 4, ffn = 128;
        return 2 * (s * d * experts + experts * 3 * s * d * ffn);
    };
    QCOMPARE(gpt2(32), qint64(3932160)); // the hook count at the exported seq 32
    QCOMPARE(moe(16), qint64(3153920));  // the hook count at the exported seq 16
    QCOMPARE(mistral(64, 192), qint64(30932992));
    QTest::newRow("GPT-2, fixed seq 32")
        << "gpt2_static.onnx" << qint64(0) << qint64(0) << gpt2(32);
    QTest::newRow("GPT-2, seq=32") << "gpt2_dynamic.onnx" << qint64(32) << qint64(0) << gpt2(32);
    QTest::newRow("GPT-2, seq=100") << "gpt2_dynamic.onnx" << qint64(100) << qint64(0) << gpt2(100);
    QTest::newRow("Mistral, seq=64 past=192")
        << "mistral_decoder.onnx" << qint64(64) << qint64(192) << mistral(64, 192);
    QTest::newRow("Mistral, seq=1 past=255")
        << "mistral_decoder.onnx" << qint64(1) << qint64(255) << mistral(1, 255);
    QTest::newRow("MoE FFN, seq=16") << "moe_ffn.onnx" << qint64(16) << qint64(0) << moe(16);
    QTest::newRow("MoE FFN, seq=64") << "moe_ffn.onnx" << qint64(64) << qint64(0) << moe(64);
    QTest::newRow("MaxViT-T 224") << "maxvit_t.onnx" << qint64(0) << qint64(0)
                                  << qint64(5381025792 + 177020928);
}

void TestOnnxImport::languageAndAttentionExportsExact() {
    QFETCH(QString, file);
    QFETCH(qint64, seq);
    QFETCH(qint64, past);
    QFETCH(qint64, macs);
    const QString path = kData + file;
    QVERIFY(loadProto(path).graph().value_info_size() == 0); // our own propagation only
    ImportOptions o;
    if (seq > 0) o.dims["seq"] = seq;
    if (past > 0) o.dims["past"] = past;
    auto net = importOnnx(path.toStdString(), o);
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    QVERIFY(net->unsupported.empty());
    QCOMPARE(net->totalMacsPerSample(), Count(macs));
    // Mistral's KV cache: 2 key/value heads x past x 16 per sample.
    if (past > 0) QCOMPARE(net->inputBytes.at("past_k0"), Count(2 * past * 16));
}

QTEST_APPLESS_MAIN(TestOnnxImport)
#include "tst_onnximport.moc"
