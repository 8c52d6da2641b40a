// The native JSON network format round-trips with the importer's graph, and bad network
// files are refused with the file and the place named; plus `tilescope-cli inspect`.
#include "clirunner.h"
#include "model/model_loader.h"
#include "model/network_json.h"
#include "netbuilder.h"

#include <QtTest>
#include <nlohmann/json.hpp>

using namespace tilescope;

namespace {

void compareNetworks(const Network& a, const Network& b) {
    QCOMPARE(a.layers.size(), b.layers.size());
    for (size_t i = 0; i < a.layers.size(); ++i) {
        const Layer &x = a.layers[i], &y = b.layers[i];
        QCOMPARE(x.name, y.name);
        QCOMPARE(x.kind, y.kind);
        QCOMPARE(x.op, y.op);
        QCOMPARE(std::vector<int>({x.inC, x.inH, x.inW, x.outC, x.outH, x.outW}),
                 std::vector<int>({y.inC, y.inH, y.inW, y.outC, y.outH, y.outW}));
        QCOMPARE(std::vector<int>({x.kernelH, x.kernelW, x.strideH, x.strideW, x.padH, x.padW,
                                   x.dilationH, x.dilationW, x.groups}),
                 std::vector<int>({y.kernelH, y.kernelW, y.strideH, y.strideW, y.padH, y.padW,
                                   y.dilationH, y.dilationW, y.groups}));
        QCOMPARE(x.weightBytes, y.weightBytes);
        QCOMPARE(x.inputs.size(), y.inputs.size());
        for (size_t k = 0; k < x.inputs.size(); ++k) {
            QCOMPARE(x.inputs[k].producer, y.inputs[k].producer);
            QCOMPARE(x.inputs[k].networkInput, y.inputs[k].networkInput);
            QCOMPARE(x.inputs[k].bytesPerSample, y.inputs[k].bytesPerSample);
        }
    }
    QCOMPARE(a.outputs, b.outputs);
    QCOMPARE(a.inputBytes, b.inputBytes);
    QCOMPARE(a.opCounts, b.opCounts);
    QCOMPARE(a.paramsCount, b.paramsCount);
    QCOMPARE(a.folded.size(), b.folded.size());
    QCOMPARE(a.totalMacsPerSample(), b.totalMacsPerSample());
}

using test::CliRun;
using test::runCli;

const QString kSamples = TILESCOPE_SAMPLES;

} // namespace

class TestNetworkJson : public QObject {
    Q_OBJECT
  private slots:
    void roundTripSamples_data();
    void roundTripSamples();
    void anyLayerOrderIsSorted();
    void badNetworks_data();
    void badNetworks();
    void inspectJson();
    void inspectTable();
    void inspectErrors_data();
    void inspectErrors();
};

void TestNetworkJson::roundTripSamples_data() {
    QTest::addColumn<QString>("model");
    for (const char* m : {"resnet50", "googlenet", "inception_v3", "mobilenet_v2", "transformer"})
        QTest::newRow(m) << kSamples + "/models/" + m + ".onnx";
}

void TestNetworkJson::roundTripSamples() {
    QFETCH(QString, model);
    auto net = loadModel(model.toStdString());
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    const std::string text = networkToJson(*net);
    auto back = parseNetworkJson(text, "mem.json");
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    compareNetworks(*net, *back);
    QCOMPARE(networkToJson(*back), text);
    // And through a file, by extension.
    QTemporaryDir dir;
    const QString path = dir.filePath("net.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text.c_str());
    f.close();
    auto loaded = loadModel(path.toStdString());
    QVERIFY(loaded.ok());
    compareNetworks(*net, *loaded);
}

void TestNetworkJson::anyLayerOrderIsSorted() {
    const Network net = test::residual(1);
    auto j = nlohmann::json::parse(networkToJson(net));
    std::reverse(j["layers"].begin(), j["layers"].end());
    auto back = parseNetworkJson(j.dump(), "rev.json");
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    compareNetworks(net, *back);
}

void TestNetworkJson::badNetworks_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    const QString head = R"({"format": "tilescope-network", "layers": [)";
    const QString a =
        R"({"name": "a", "kind": "conv", "in": [3, 8, 8], "out": [4, 8, 8], "inputs": [{"input": "x", "bytes": 192}]})";
    QTest::newRow("not json") << "{"
                              << "bad.json: byte 2: invalid JSON";
    QTest::newRow("no format") << R"({"layers": []})"
                               << "bad.json: not a Tilescope network";
    QTest::newRow("cycle")
        << head +
               R"({"name": "a", "kind": "conv", "in": [4, 8, 8], "out": [4, 8, 8], "inputs": [{"layer": "b"}]},
        {"name": "b", "kind": "conv", "in": [4, 8, 8], "out": [4, 8, 8], "inputs": [{"layer": "a"}]}]})"
        << "bad.json: layers: the graph has a cycle through a, b";
    QTest::newRow("self loop")
        << head +
               R"({"name": "a", "kind": "conv", "in": [4, 8, 8], "out": [4, 8, 8], "inputs": [{"layer": "a"}]}]})"
        << "bad.json: layer 'a': takes its own output as input (cycle)";
    QTest::newRow("unknown input")
        << head + a +
               R"(, {"name": "b", "kind": "pool", "in": [4, 8, 8], "out": [4, 4, 4], "inputs": [{"layer": "zz"}]}]})"
        << "bad.json: layer 'b': input names unknown layer 'zz'";
    QTest::newRow("duplicate") << head + a + "," + a + "]}"
                               << "bad.json: layer 'a': duplicated layer name";
    QTest::newRow("zero dim")
        << head +
               R"({"name": "a", "kind": "conv", "in": [3, 0, 8], "out": [4, 8, 8], "inputs": [{"input": "x", "bytes": 1}]}]})"
        << "bad.json: layer 'a'.in: value 0 out of range (min 1)";
    QTest::newRow("bad kind")
        << head +
               R"({"name": "a", "kind": "lstm", "in": [3, 8, 8], "out": [4, 8, 8], "inputs": [{"input": "x", "bytes": 1}]}]})"
        << "bad.json: layer 'a'.kind: expected one of";
    QTest::newRow("no inputs")
        << head +
               R"({"name": "a", "kind": "conv", "in": [3, 8, 8], "out": [4, 8, 8], "inputs": []}]})"
        << "bad.json: layer 'a'.inputs: expected a non-empty list";
    QTest::newRow("groups")
        << head +
               R"({"name": "a", "kind": "conv", "in": [3, 8, 8], "out": [4, 8, 8], "groups": 2, "inputs": [{"input": "x", "bytes": 1}]}]})"
        << "bad.json: layer 'a'.groups: groups must divide";
    QTest::newRow("float count")
        << R"({"format": "tilescope-network", "inputs": {"x": 3.3e113}, "layers": [)" + a + "]}"
        << "bad.json: inputs.x: expected a non-negative integer";
    QTest::newRow("float op count")
        << R"({"format": "tilescope-network", "op_counts": {"Conv": 2.5}, "layers": [)" + a + "]}"
        << "bad.json: op_counts.Conv: expected a non-negative integer";
    QTest::newRow("space in name")
        << head +
               R"({"name": "a b", "kind": "conv", "in": [3, 8, 8], "out": [4, 8, 8], "inputs": [{"input": "x", "bytes": 1}]}]})"
        << "bad.json: layers[0]: layer name 'a b' contains white space";
}

void TestNetworkJson::badNetworks() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    auto net = parseNetworkJson(json.toStdString(), "bad.json");
    QVERIFY(!net.ok());
    QVERIFY2(QString::fromStdString(net.error().message).startsWith(message),
             net.error().message.c_str());
}

// CLI.md: inspect --json prints layers, macs (batch 1), params, ops, folded, unsupported.
void TestNetworkJson::inspectJson() {
    const CliRun r = runCli({"inspect", kSamples + "/models/resnet50.onnx", "--json"});
    QCOMPARE(r.status, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    auto net = loadModel((kSamples + "/models/resnet50.onnx").toStdString());
    QVERIFY(net.ok());
    QCOMPARE(j["layers"].get<size_t>(), net->layers.size());
    QCOMPARE(j["macs"].get<long long>(), net->totalMacsPerSample());
    QCOMPARE(j["params"].get<long long>(), net->paramsCount);
    QCOMPARE(j["ops"]["Conv"].get<int>(), 53);
    QVERIFY(j["folded"].is_array() && j["folded"].size() == net->folded.size());
    QVERIFY(j["unsupported"].is_array() && j["unsupported"].empty());
}

void TestNetworkJson::inspectTable() {
    const CliRun r = runCli({"inspect", kSamples + "/models/transformer.onnx"});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.out.contains("scheduled layers"), qPrintable(r.out));
    QVERIFY(r.out.contains("matmul"));
    QVERIFY(r.out.contains("folded:"));
}

void TestNetworkJson::inspectErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing file") << QStringList{"inspect", "/nonexistent/m.onnx"} << 1
                                  << "tilescope-cli: /nonexistent/m.onnx: no such file";
    QTest::newRow("wrong extension") << QStringList{"inspect", kSamples + "/hw/../../README.md"}
                                     << 1 << "unknown model format '.md'";
    QTest::newRow("no model") << QStringList{"inspect"} << 2
                              << "expected exactly one MODEL argument";
    QTest::newRow("unknown option")
        << QStringList{"inspect", "x.onnx", "--frobnicate"} << 2 << "unknown option '--frobnicate'";
    QTest::newRow("unknown command")
        << QStringList{"frobnicate"} << 2 << "unknown command 'frobnicate'";
    QTest::newRow("bad fallback") << QStringList{"inspect", "x.onnx", "--fallback", "gpu"} << 2
                                  << "--fallback takes";
}

void TestNetworkJson::inspectErrors() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    const CliRun r = runCli(args);
    QCOMPARE(r.status, code);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    if (code == 1) QCOMPARE(r.err.count('\n'), 1); // one line
    QVERIFY(r.out.isEmpty());
}

QTEST_GUILESS_MAIN(TestNetworkJson)
#include "tst_networkjson.moc"
