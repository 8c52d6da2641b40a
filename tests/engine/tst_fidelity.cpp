// Model agreement at scale (docs/isa.md, "Evaluator agreement"): on meshes from 4x4 to
// 12x12 and on fast-link, slow-DRAM and four-sided-DRAM variants, the instruction-level
// replay of every sample's program is held against the evaluator's delay, with DRAM bytes
// exact and the per-link bytes equal (tst_codegen checks those on every program it makes).
// Every row must agree within 15%: layer-sequential trees (batch 1 and the largest valid
// batch <= 8), one segment holding every layer at batch 1, and annealed trees (a short
// search at batch 8) on meshes the model was not tuned on and on the newer layer kinds.
// Blocked leaves (docs/cost-model.md §2b: slices larger than their tiles' buffers, worked
// through in blocks) on the models larger than the chip. Wafer-scale meshes (24x24 and the
// 32x32 wafer preset): layer-sequential trees, so the rows stay quick. DRAM run models (the
// runs of each tensor's planned layout charged by both) hold too, but for one annealed
// tree held as a known disagreement (dramRuns below).
#include "codegen/codegen.h"
#include "hwvariants.h"
#include "model/model_loader.h"
#include "replaycheck.h"
#include "search/search.h"
#include "sim/fidelity.h"
#include "sim/simulator.h"

#include <QtTest>
#include <map>
#include <string>

using namespace tilescope;

namespace {

const char* const kModels[] = {"mobilenet_v2", "resnet50", "googlenet", "inception_v3",
                               "transformer"};
const char* const kMeshes[] = {
    "edge", "6x6", "8x8", "10x10", "cloud", "cloud+fastlinks", "8x8+slowdram", "6x6+4sides"};

RATree oneSegment(const Network& net, int batch) {
    std::string text = "T " + std::to_string(batch) + "/1\n\tT " + std::to_string(batch) + "/1\n";
    for (const auto& l : net.layers)
        text += "\t\t" + l.name + " " + std::to_string(batch) + "\n";
    auto r = parseTreeText(text, net, "one segment");
    if (!r) qFatal("%s", r.error().message.c_str());
    return *r;
}

} // namespace

class TestFidelity : public QObject {
    Q_OBJECT
  private slots:
    void agreement_data();
    void agreement();
    void newKinds_data();
    void newKinds();
    void blocked_data();
    void blocked();
    void waferScale_data();
    void waferScale();
    void dramRuns_data();
    void dramRuns();
    void loadOrders_data();
    void loadOrders();
    void stageBytes_data();
    void stageBytes();
    void channelSplit_data();
    void channelSplit();

  private:
    // expectBlocked: the evaluated tree must hold a blocked leaf (the rows that test them).
    void check(const std::string& path, const QString& hw, const QString& tree,
               bool expectBlocked = false);
};

void TestFidelity::agreement_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("hw");
    QTest::addColumn<QString>("tree");
    for (const char* hw : kMeshes)
        for (const char* m : kModels)
            for (const char* tree : {"ls1", "ls8", "seg1"})
                QTest::newRow((std::string(hw) + " " + m + " " + tree).c_str()) << m << hw << tree;
    // Annealed trees (a short search, batch 8) on meshes the model was not tuned on.
    for (const char* hw : {"8x8", "6x6+4sides"})
        for (const char* m : {"resnet50", "googlenet", "transformer"})
            QTest::newRow((std::string(hw) + " " + m + " sa8").c_str()) << m << hw << "sa8";
}

void TestFidelity::agreement() {
    QFETCH(QString, model);
    QFETCH(QString, hw);
    QFETCH(QString, tree);
    check(std::string(TILESCOPE_SAMPLES) + "/models/" + model.toStdString() + ".onnx", hw, tree);
}

// The layer kinds beyond plain CNNs and encoders (ConvTranspose in both forms, 3-D conv,
// unrolled LSTM / GRU, Einsum, window attention), on the edge mesh.
void TestFidelity::newKinds_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("tree");
    for (const char* m : {"unet_decoder", "dcgan_generator", "r3d_18", "lstm", "gru",
                          "einsum_attention", "swin_small"})
        for (const char* tree : {"ls1", "ls8", "sa8"})
            QTest::newRow((std::string(m) + " " + tree).c_str()) << m << tree;
}

void TestFidelity::newKinds() {
    QFETCH(QString, model);
    QFETCH(QString, tree);
    check(std::string(TILESCOPE_TESTDATA) + "/" + model.toStdString() + ".onnx", "edge", tree);
}

// Workloads larger than the chip, whose slices do not fit their tiles' buffers: the
// segmentation stem (every convolution blocked layer by layer on edge and testchip), the
// encoder at sequence length 4096 (score products, softmaxes and A x V blocked on cloud) and
// VGG-11 on edge and testchip (its classifier's weights stream in output-channel blocks).
void TestFidelity::blocked_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("hw");
    QTest::addColumn<QString>("tree");
    for (const char* hw : {"edge", "testchip"})
        for (const char* tree : {"ls1", "ls8", "sa8"})
            QTest::newRow((std::string("seg_stem_1024x2048 ") + hw + " " + tree).c_str())
                << "seg_stem_1024x2048" << hw << tree;
    for (const char* hw : {"cloud", "edge"})
        for (const char* tree : {"ls1", "ls8", "sa8"})
            QTest::newRow((std::string("encoder_seq4096 ") + hw + " " + tree).c_str())
                << "encoder_seq4096" << hw << tree;
    for (const char* hw : {"edge", "testchip"})
        for (const char* tree : {"ls1", "sa8"})
            QTest::newRow((std::string("vgg11 ") + hw + " " + tree).c_str())
                << "vgg11" << hw << tree;
}

void TestFidelity::blocked() {
    QFETCH(QString, model);
    QFETCH(QString, hw);
    QFETCH(QString, tree);
    check(std::string(TILESCOPE_TESTDATA) + "/" + model.toStdString() + ".onnx", hw, tree, true);
}

// Meshes of 576 and 1,024 tiles (the wafer preset: 32x32, DRAM on four sides): a row's
// search, program and replay cost grows with the tiles (a short search on 24x24 alone took
// about 10 s of the 2-core CI budget), so the layer-sequential trees at batch 1 on two
// models; the annealed trees on 32x32 and 64x64 are measured through the CLI and quoted in
// docs/validation.md.
void TestFidelity::waferScale_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("hw");
    QTest::addColumn<QString>("tree");
    for (const char* hw : {"24x24", "wafer"})
        for (const char* m : {"resnet50", "mobilenet_v2"})
            QTest::newRow((std::string(hw) + " " + m + " ls1").c_str()) << m << hw << "ls1";
}

void TestFidelity::waferScale() {
    QFETCH(QString, model);
    QFETCH(QString, hw);
    QFETCH(QString, tree);
    check(std::string(TILESCOPE_SAMPLES) + "/models/" + model.toStdString() + ".onnx", hw, tree);
}

void TestFidelity::check(const std::string& path, const QString& hw, const QString& tree,
                         bool expectBlocked) {
    // TILESCOPE_FIDELITY_STRIDE=N replays only every Nth row of each test function (the
    // sanitizer build runs the matrix so, docs/hardening.md); unset or 1: every row.
    if (const int stride = qEnvironmentVariableIntValue("TILESCOPE_FIDELITY_STRIDE"); stride > 1) {
        static std::map<std::string, int> rowsSeen;
        if (rowsSeen[QTest::currentTestFunction()]++ % stride != 0)
            QSKIP("outside the sampled rows (TILESCOPE_FIDELITY_STRIDE)");
    }
    auto net = loadModel(path);
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    Hardware h;
    QVERIFY(test::hardwareVariant(hw.toStdString(), h));
    EvalContext ctx(*net, h);
    RATree t;
    int batch = 1;
    if (tree == "ls1") {
        t = RATree::layerSequential(*net, 1);
    } else if (tree == "ls8") {
        for (batch = 8; batch > 1; batch /= 2)
            if (evaluate(ctx, RATree::layerSequential(*net, batch), batch, {}).valid) break;
        t = RATree::layerSequential(*net, batch);
    } else if (tree == "seg1") {
        t = oneSegment(*net, 1);
        if (!evaluate(ctx, t, 1, {}).valid)
            QSKIP("every layer's weights together do not fit the buffers here");
    } else {
        batch = 8;
        SearchConfig cfg;
        cfg.seed = 1;
        cfg.iterations = 400;
        cfg.chains = 1;
        cfg.totalBatch = batch;
        auto s = runSearch(*net, h, cfg);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
        t = s->bestTree;
    }
    auto r = generateProgram(ctx, t, batch, {});
    // A searched tree can hold more activations in flight at once than the generator's
    // static buffer layout finds room for (docs/isa.md, "Export failures"): a known
    // limitation of the generator, reported, not a disagreement of the two models.
    if (!r.ok() && tree == "sa8" && r.error().message.find("no room") != std::string::npos)
        QSKIP(qPrintable("export failure (docs/isa.md, Export failures): " +
                         QString::fromStdString(r.error().message)));
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    SimResult s;
    test::replayChecked(*r, h, s);
    if (QTest::currentTestFailed()) return;
    const Evaluation& ev = r->layout.evaluation;
    if (expectBlocked) QVERIFY(ev.blockedLeaves > 0);
    const ModelAgreement a = modelAgreement(s.delay, ev.delay);
    qInfo("%s: sim %.0f eval %.0f ratio %.3f", QTest::currentDataTag(), s.delay, ev.delay, a.ratio);
    QVERIFY2(a.agrees, qPrintable(QString::number(a.ratio)));
}

// Rows of sample models on hardware variants (hwvariants.h), every combination: the columns
// agreement() reads.
void sampleRows(std::initializer_list<const char*> hws, std::initializer_list<const char*> models,
                std::initializer_list<const char*> trees) {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("hw");
    QTest::addColumn<QString>("tree");
    for (const char* hw : hws)
        for (const char* m : models)
            for (const char* tree : trees)
                QTest::newRow((std::string(hw) + " " + m + " " + tree).c_str()) << m << hw << tree;
}

// Templates with a DRAM run model (docs/cost-model.md §4b): every DRAM transfer costs its
// runs in its tensor's planned layout, in the estimate and in the replay alike.
void TestFidelity::dramRuns_data() {
    sampleRows({"edge+runs", "cloud+runs", "6x6+4sides+runs"},
               {"mobilenet_v2", "resnet50", "googlenet"}, {"ls1", "ls8", "sa8"});
}

void TestFidelity::dramRuns() {
    QFETCH(QString, model);
    QFETCH(QString, hw);
    QFETCH(QString, tree);
    check(std::string(TILESCOPE_SAMPLES) + "/models/" + model.toStdString() + ".onnx", hw, tree);
}

// Load orders fixed by the template (docs/isa.md, "Load orders"): the weights whole first
// and the input by rows, or the input whole first and the weights by output channel, in the
// estimate's stage pacing and the program's stages alike.
void TestFidelity::loadOrders_data() {
    sampleRows(
        {"edge+weightsfirst", "edge+inputsfirst", "testchip+weightsfirst", "testchip+inputsfirst"},
        {"mobilenet_v2", "resnet50", "googlenet"}, {"ls1", "ls8", "sa8"});
}

void TestFidelity::loadOrders() {
    agreement();
}

// Stages sized by the template (tile.stage_bytes; docs/isa.md, "Stage granularity"): an
// instruction of B bytes in ceil(B / N) stages, from many small ones (N = 256: every
// instruction over 16 KiB at the 64-stage limit) to whole ones (N = 65536: every one up to
// 64 KiB in one stage), in the program's dependencies and the estimate's pacing alike.
void TestFidelity::stageBytes_data() {
    sampleRows({"edge+stage256", "edge+stage4096", "edge+stage65536", "testchip+stage256",
                "testchip+stage4096", "testchip+stage65536"},
               {"mobilenet_v2", "resnet50", "googlenet"}, {"ls1", "ls8", "sa8"});
}

void TestFidelity::stageBytes() {
    agreement();
}

// Input-channel parts (tile.channel_split; docs/cost-model.md §2d): the mapper splits the
// reduction of many of these layers (a member's partial sums sent to its root over the NoC,
// added there).
void TestFidelity::channelSplit_data() {
    sampleRows({"edge+split", "cloud+split"},
               {"mobilenet_v2", "resnet50", "googlenet", "transformer"}, {"ls1", "ls8", "sa8"});
}

void TestFidelity::channelSplit() {
    agreement();
}

QTEST_GUILESS_MAIN(TestFidelity)
#include "tst_fidelity.moc"
