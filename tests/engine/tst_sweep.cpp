// engine/sweep: spec validation (errors name the file, the JSON place and the reason), grid
// expansion, stable point keys, one point's run, the runner and shard split, and the SQLite
// store (schema, idempotent inserts, reading back, merging).
#include "search/search.h"
#include "sweep/sweep.h"
#include "sweep/sweeprunner.h"
#include "sweep/sweepstore.h"
#include "util/fileio.h"

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <thread>

using namespace tilescope;
using nlohmann::json;

namespace {

const std::string kSqueeze = std::string(TILESCOPE_TESTDATA) + "/squeezenet1_0.onnx";
const std::string kAlex = std::string(TILESCOPE_TESTDATA) + "/alexnet.onnx";
// A decoder with free `seq` and `past` axes (dynamic batch, KV cache inputs).
const std::string kDecoder = std::string(TILESCOPE_TESTDATA) + "/llama_decoder.onnx";
// Written by the sweep command before the `dims` column existed (schema 1), from the spec
// schema1Spec() gives: squeezenet on testchip, batches 1 and 2, 5 iterations, one chain.
const std::string kSchema1 = std::string(TILESCOPE_TESTDATA) + "/sweep_schema1.sqlite";

Result<SweepSpec> parse(const json& j, const std::string& dir = "") {
    return parseSweepSpec(j.dump(), "spec.json", dir);
}

json baseSpec() {
    return {{"models", {kSqueeze}},
            {"hardware", {"edge"}},
            {"batches", {1}},
            {"search", {{"iterations", 20}, {"chains", 1}}}};
}

SweepRow sampleRow(const std::string& key, double cost) {
    SweepRow r;
    r.point = key;
    r.model = "/m.onnx";
    r.modelSha256 = "abc";
    r.hwName = "edge";
    r.hwJson = "{}";
    r.batch = 2;
    r.objectiveN = 2;
    r.objectiveM = 1;
    r.seed = 7;
    r.mode = "set";
    r.valid = std::isfinite(cost);
    r.reason = r.valid ? "" : "no valid tree";
    r.energyPj = 1.5;
    r.delayCycles = 2.5;
    r.cost = cost;
    r.dramBytes = 10;
    r.nocHopBytes = 20;
    r.elapsedS = 0.25;
    r.iterations = 20;
    r.treeJson = "{}";
    r.searchJson = "{}";
    r.createdAt = "2025-01-01T00:00:00Z";
    return r;
}

} // namespace

class TstSweep : public QObject {
    Q_OBJECT
  private slots:
    void specErrors_data();
    void specErrors();
    void expansion();
    void dottedKeys();
    void keysStable();
    void relativePaths();
    void runPointMatchesSearch();
    void failingPoint();
    void runnerAndShards();
    void store();
    void storeRejectsForeignFiles();
    void merge();
    void dimsAxes();
    void dimsErrors();
    void dimsPointRecordsBindings();
    void schema1Migrates();
    void schema1ReadOnlyAndMerge();
};

void TstSweep::specErrors_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("expected");
    const auto add = [](const char* name, const json& j, const char* expected) {
        QTest::newRow(name) << QString::fromStdString(j.dump()) << QString(expected);
    };
    json j = baseSpec();
    j.erase("models");
    add("no models", j, "spec.json: models: expected a non-empty list");
    j = baseSpec();
    j["models"] = {"/nonexistent/x.onnx"};
    add("missing model", j, "spec.json: models[0]: /nonexistent/x.onnx: no such file");
    j = baseSpec();
    j["hardware"] = {"edge", "moon"};
    add("unknown preset", j, "spec.json: hardware[1]: 'moon': no such file, and not a preset");
    j = baseSpec();
    j["hardware"] = {"edge", {{"base", "edge"}, {"vary", {{"noc.link_bytes_per_cycle", 12}}}}};
    add("vary not a list", j,
        "spec.json: hardware[1].vary.\"noc.link_bytes_per_cycle\": expected a non-empty list");
    j = baseSpec();
    j["hardware"] = {{{"base", "edge"}, {"vary", {{"noc.link_bytes_per_cycle", {12, -3}}}}}};
    add("vary value invalid", j,
        "spec.json: hardware[0] (noc.link_bytes_per_cycle=-3): noc.link_bytes_per_cycle: must be "
        "positive");
    j = baseSpec();
    j["hardware"] = {{{"base", "edge"}, {"set", {{"noc.typo", 3}}}}};
    add("set unknown key", j, "spec.json: hardware[0]: noc.typo: unknown key");
    j = baseSpec();
    j["hardware"] = {{{"base", "edge"}, {"set", {{"tile.macs.x", 3}}}}};
    add("set through a number", j,
        "spec.json: hardware[0].set.\"tile.macs.x\": 'tile.macs' is not an object");
    j = baseSpec();
    j["hardware"] = {{{"set", {{"tile.macs", 3}}}}};
    add("no base", j, "spec.json: hardware[0].base: expected a preset name or a file");
    j = baseSpec();
    j["batches"] = {1, 0};
    add("batch zero", j, "spec.json: batches[1]: expected a whole number from 1");
    j = baseSpec();
    j["objectives"] = {{1, 1}, {0, 0}};
    add("objective zero", j, "spec.json: objectives[1]: expected [n, m]");
    j = baseSpec();
    j["seeds"] = {-1};
    add("negative seed", j, "spec.json: seeds[0]: expected a whole number from 0");
    j = baseSpec();
    j["search"] = {{"beta", 1}, {"iterations", 5}};
    add("two budgets", j, "spec.json: search: beta, iterations and time each set the budget");
    j = baseSpec();
    j["search"] = {{"mode", "sideways"}};
    add("bad mode", j, "spec.json: search.mode: expected set, ls, lp, dp-lp or random");
    j = baseSpec();
    j["search"] = {{"layouts", "rows"}};
    add("bad layouts", j, "spec.json: search.layouts: expected auto, nchw, nhwc, chwn or nchwc");
    j = baseSpec();
    j["search"] = {{"chains", 0}};
    add("zero chains", j, "spec.json: search.chains: expected a whole number from 1 to 4096");
    j = baseSpec();
    j["search"] = {{"beta", 1e30}};
    add("huge beta", j, "spec.json: search.beta: models[0] (30 layers)");
    j = baseSpec();
    j["modles"] = {kSqueeze};
    add("typo key", j, "spec.json: modles: unknown key");
    QTest::newRow("not JSON") << QStringLiteral("{\"models\": [")
                              << QStringLiteral("spec.json: byte");
}

void TstSweep::specErrors() {
    QFETCH(QString, spec);
    QFETCH(QString, expected);
    auto s = parseSweepSpec(spec.toStdString(), "spec.json", "");
    QVERIFY(!s);
    const QString msg = QString::fromStdString(s.error().message);
    QVERIFY2(msg.startsWith(expected) || msg.contains(expected), qPrintable(msg));
    QVERIFY2(!msg.contains('\n'), qPrintable(msg));
}

void TstSweep::expansion() {
    json j = baseSpec();
    j["hardware"] = {
        "edge",
        {{"base", "edge"},
         {"set", {{"dram.bytes_per_cycle", 8}}},
         {"vary",
          {{"noc.link_bytes_per_cycle", {12, 24}}, {"tile.buffer_bytes", {524288, 2097152}}}}}};
    j["batches"] = {1, 2};
    j["seeds"] = {1, 2};
    auto s = parse(j);
    QVERIFY2(s, s ? "" : s.error().message.c_str());
    QCOMPARE(int(s->hardware.size()), 1 + 4); // edge + the 2 x 2 grid
    const SweepHardware& v = s->hardware[2];  // the last key varies fastest
    QCOMPARE(v.hw.nocBytesPerCycle, 12.0);
    QCOMPARE(v.hw.bufferBytes, Bytes(2097152));
    QCOMPARE(v.hw.dramBytesPerCycle, 8.0); // `set` applies to every variant
    QCOMPARE(v.json["noc"]["link_bytes_per_cycle"].get<double>(), 12.0);
    QVERIFY2(v.name.find("noc.link_bytes_per_cycle=12") != std::string::npos, v.name.c_str());
    QVERIFY2(v.name.find("tile.buffer_bytes=2097152") != std::string::npos, v.name.c_str());
    // The edge preset's objective (E^2 x D) holds for its variants too.
    QCOMPARE(v.objective.n, 2.0);
    QCOMPARE(v.objective.m, 1.0);

    const auto points = expandSweep(*s);
    QCOMPARE(int(points.size()), 1 * 5 * 2 * 2);
    std::set<std::string> keys;
    for (std::size_t i = 0; i < points.size(); ++i) {
        QCOMPARE(points[i].index, i);
        QCOMPARE(int(points[i].key.size()), 64);
        keys.insert(points[i].key);
    }
    QCOMPARE(int(keys.size()), int(points.size()));
    // Nesting: seeds innermost, then batches, hardware, models.
    QCOMPARE(points[0].seed, std::uint64_t(1));
    QCOMPARE(points[1].seed, std::uint64_t(2));
    QCOMPARE(points[2].batch, 2);
    QCOMPARE(points[4].hardware, 1);

    // The same hardware twice is one point per (batch, seed), not two.
    j["hardware"] = {"edge", "edge", {{"base", "edge"}, {"name", "renamed"}}};
    auto dup = parse(j);
    QVERIFY(dup);
    QCOMPARE(int(expandSweep(*dup).size()), 2 * 2);

    // Explicit objectives replace the hardware's default.
    j["objectives"] = {{1, 1}, {1, 2}};
    auto obj = parse(j);
    QVERIFY(obj);
    const auto op = expandSweep(*obj);
    QCOMPARE(int(op.size()), 2 * 2 * 2);
    QCOMPARE(op[0].objective.m, 1.0);
    QCOMPARE(op[2].objective.m, 2.0);
}

void TstSweep::dottedKeys() {
    json j = {{"noc", {{"link_bytes_per_cycle", 24}}}};
    QVERIFY(!setDottedKey(j, "noc.link_bytes_per_cycle", 12));
    QCOMPARE(j["noc"]["link_bytes_per_cycle"].get<int>(), 12);
    QVERIFY(!setDottedKey(j, "dram.latency_cycles", 100)); // creates "dram"
    QCOMPARE(j["dram"]["latency_cycles"].get<int>(), 100);
    QVERIFY(setDottedKey(j, "noc.link_bytes_per_cycle.x", 1));
    QVERIFY(setDottedKey(j, "noc..x", 1));
    QVERIFY(setDottedKey(j, "", 1));
    const auto flat = flattenJson(j);
    QCOMPARE(int(flat.size()), 2);
    QCOMPARE(flat[0].first, std::string("dram.latency_cycles"));
}

void TstSweep::keysStable() {
    auto a = parse(baseSpec());
    auto b = parse(baseSpec());
    QVERIFY(a && b);
    const auto pa = expandSweep(*a), pb = expandSweep(*b);
    QCOMPARE(pa[0].key, pb[0].key);
    // The key is a function of its documented inputs only: recomputing it from them gives
    // the same hash, and the hardware's name is not one of them.
    json hw = a->hardware[0].json;
    const json search = sweepSearchJson(a->search);
    QCOMPARE(sweepPointKey(a->models[0].sha256, hw, 1, pa[0].objective, 1, search), pa[0].key);
    hw["name"] = "another name";
    QCOMPARE(sweepPointKey(a->models[0].sha256, hw, 1, pa[0].objective, 1, search), pa[0].key);
    // Each input changes it.
    QVERIFY(sweepPointKey(a->models[0].sha256, hw, 2, pa[0].objective, 1, search) != pa[0].key);
    QVERIFY(sweepPointKey(a->models[0].sha256, hw, 1, pa[0].objective, 2, search) != pa[0].key);
    QVERIFY(sweepPointKey(a->models[0].sha256, hw, 1, {1, 1}, 1, search) != pa[0].key);
    QVERIFY(sweepPointKey("0" + a->models[0].sha256.substr(1), hw, 1, pa[0].objective, 1, search) !=
            pa[0].key);
    json hw2 = hw;
    hw2["noc"]["link_bytes_per_cycle"] = 12;
    QVERIFY(sweepPointKey(a->models[0].sha256, hw2, 1, pa[0].objective, 1, search) != pa[0].key);
    json s2 = search;
    s2["iterations"] = 21;
    QVERIFY(sweepPointKey(a->models[0].sha256, hw, 1, pa[0].objective, 1, s2) != pa[0].key);
    // Planned DRAM layouts are the default and leave the key as it was; one fixed layout
    // is a point of its own.
    QVERIFY(!search.contains("layouts"));
    json withLayouts = baseSpec();
    withLayouts["search"]["layouts"] = "nhwc";
    auto c = parse(withLayouts);
    QVERIFY(c);
    QCOMPARE(c->search.layouts.fixed, DramLayout::Nhwc);
    QVERIFY(expandSweep(*c)[0].key != pa[0].key);
    // threads never change a result, so they do not change the key.
    json j = baseSpec();
    j["search"]["threads"] = 2;
    auto t = parse(j);
    QVERIFY(t);
    QCOMPARE(expandSweep(*t)[0].key, pa[0].key);
    // The hash of this documented text (docs/sweep.md, "Point key"), so a change of the key's
    // recipe, which would make every database rerun everything, cannot pass unnoticed.
    const json doc = {{"model_sha256", "m"}, {"hw", {{"mesh", {{"x", 2}}}}},
                      {"batch", 1},          {"objective", {1.0, 1.0}},
                      {"seed", 1},           {"search", {{"iterations", 5}}}};
    QCOMPARE(sweepPointKey("m", {{"mesh", {{"x", 2}}}, {"name", "x"}}, 1, {1, 1}, 1,
                           {{"iterations", 5}}),
             sha256Hex(doc.dump()));
    QCOMPARE(doc.dump(), std::string("{\"batch\":1,\"hw\":{\"mesh\":{\"x\":2}},\"model_sha256\":"
                                     "\"m\",\"objective\":[1.0,1.0],\"search\":{\"iterations\":5},"
                                     "\"seed\":1}"));
}

void TstSweep::relativePaths() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // A model and a hardware file next to the spec, named relatively.
    QVERIFY(QFile::copy(QString::fromStdString(kSqueeze), dir.filePath("sq.onnx")));
    std::ofstream(dir.filePath("hw.json").toStdString())
        << R"({"name": "mine", "mesh": {"x": 2, "y": 2}})";
    json j = baseSpec();
    j["models"] = {"sq.onnx"};
    j["hardware"] = {"hw.json", {{"base", "hw.json"}, {"set", {{"tile.macs", 512}}}}};
    auto s = parse(j, dir.path().toStdString());
    QVERIFY2(s, s ? "" : s.error().message.c_str());
    QCOMPARE(QString::fromStdString(s->models[0].path), dir.filePath("sq.onnx"));
    QCOMPARE(s->hardware[0].name, std::string("mine"));
    QCOMPARE(s->hardware[0].hw.meshX, 2);
    QCOMPARE(s->hardware[1].hw.macsPerTile, 512);
    QCOMPARE(s->hardware[1].name, std::string("mine tile.macs=512"));
    // The same model file by another path is the same point.
    auto abs = parse(baseSpec());
    QVERIFY(abs);
    QCOMPARE(s->models[0].sha256, abs->models[0].sha256);
}

void TstSweep::runPointMatchesSearch() {
    json j = baseSpec();
    j["batches"] = {2};
    j["seeds"] = {5};
    j["search"] = {{"iterations", 40}, {"chains", 2}};
    auto s = parse(j);
    QVERIFY(s);
    const auto points = expandSweep(*s);
    const SweepRow row = runSweepPoint(*s, points[0]);
    QVERIFY2(row.valid, row.reason.c_str());
    // runSearch with the same inputs and seed, then anneal's detail evaluation.
    SearchConfig c;
    c.seed = 5;
    c.iterations = 40;
    c.chains = 2;
    c.totalBatch = 2;
    c.objective = defaultObjective(s->hardware[0].hw);
    auto r = runSearch(*s->models[0].net, s->hardware[0].hw, c);
    QVERIFY(r);
    QCOMPARE(row.cost, r->best.cost);
    QCOMPARE(row.energyPj, r->best.energy.total());
    QCOMPARE(row.delayCycles, r->best.delay);
    QCOMPARE(row.iterations, 40LL);
    QCOMPARE(row.point, points[0].key);
    QCOMPARE(row.seed, std::uint64_t(5));
    QCOMPARE(row.batch, 2);
    const json tree = json::parse(row.treeJson);
    QCOMPARE(tree["format"].get<std::string>(), std::string("tilescope-ratree"));
    QCOMPARE(json::parse(row.searchJson)["iterations"].get<int>(), 40);
    // The row survives the trip through JSON (MPI's message).
    auto back = sweepRowFromJson(sweepRowToJson(row));
    QVERIFY(back);
    QCOMPARE(back->cost, row.cost);
    QCOMPARE(back->treeJson, row.treeJson);
}

void TstSweep::failingPoint() {
    json j = baseSpec();
    // A 2 KiB buffer: AlexNet's first convolution cannot hold even one output row's
    // 11-row input window (11 x 224 x 3 B), however it is blocked.
    j["models"] = {kAlex};
    j["hardware"] = {{{"base", "edge"}, {"set", {{"tile.buffer_bytes", 2048}}}}};
    auto s = parse(j);
    QVERIFY(s);
    const SweepRow row = runSweepPoint(*s, expandSweep(*s)[0]);
    QVERIFY(!row.valid);
    QVERIFY2(row.reason.find("buffer") != std::string::npos, row.reason.c_str());
    QVERIFY(std::isnan(row.cost));
    QVERIFY(row.treeJson.empty());
}

void TstSweep::runnerAndShards() {
    // Shards partition the points.
    std::set<std::size_t> all;
    for (int i = 0; i < 3; ++i)
        for (std::size_t k : shardPoints(10, i, 3)) {
            QVERIFY(k % 3 == std::size_t(i));
            QVERIFY(all.insert(k).second);
        }
    QCOMPARE(int(all.size()), 10);
    QCOMPARE(int(shardPoints(4, 0, 1).size()), 4);

    json j = baseSpec();
    j["batches"] = {1, 2};
    j["seeds"] = {1, 2};
    auto s = parse(j);
    QVERIFY(s);
    const auto points = expandSweep(*s);
    const std::vector<std::size_t> todo = {0, 1, 2, 3};
    const auto caller = std::this_thread::get_id();
    std::set<std::string> got;
    int idle = 0;
    runSweepPoints(
        *s, points, todo, 2,
        [&](SweepRow&& r) {
            QVERIFY(std::this_thread::get_id() == caller);
            got.insert(r.point);
        },
        [&] { ++idle; }, {}, 0.001);
    QCOMPARE(int(got.size()), 4);
    for (const auto& p : points)
        QVERIFY(got.count(p.key));
    // A stop before the start runs nothing and delivers nothing.
    std::stop_source stop;
    stop.request_stop();
    int rows = 0;
    runSweepPoints(
        *s, points, todo, 2, [&](SweepRow&&) { ++rows; }, {}, stop.get_token());
    QCOMPARE(rows, 0);
}

void TstSweep::store() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    {
        auto st = SweepStore::open(path);
        QVERIFY2(st, st ? "" : st.error().message.c_str());
        QCOMPARE(int((*st)->points()->size()), 0);
        auto added = (*st)->insert(sampleRow("k1", 3.5));
        QVERIFY(added && *added);
        // The same point again keeps the first row.
        added = (*st)->insert(sampleRow("k1", 9.9));
        QVERIFY(added && !*added);
        QVERIFY(*(*st)->insert(sampleRow("k2", std::nan(""))));
        // WAL: the log beside the database while it is open.
        QVERIFY(QFile::exists(QString::fromStdString(path + "-wal")));
    }
    auto st = SweepStore::open(path, false);
    QVERIFY(st);
    const auto pts = (*st)->points();
    QCOMPARE(*pts, (std::set<std::string>{"k1", "k2"}));
    auto rows = (*st)->rows();
    QVERIFY(rows);
    QCOMPARE(int(rows->size()), 2);
    const SweepRow& a = (*rows)[0];
    const SweepRow want = sampleRow("k1", 3.5);
    QCOMPARE(a.cost, 3.5);
    QCOMPARE(a.seed, want.seed);
    QCOMPARE(a.batch, want.batch);
    QCOMPARE(a.hwName, want.hwName);
    QCOMPARE(a.objectiveN, 2.0);
    QCOMPARE(a.createdAt, want.createdAt);
    QCOMPARE(a.iterations, 20LL);
    QVERIFY(a.valid);
    const SweepRow& b = (*rows)[1];
    QVERIFY(!b.valid);
    QVERIFY(std::isnan(b.cost)); // NULL, not 0
    QCOMPARE(b.reason, std::string("no valid tree"));
}

void TstSweep::storeRejectsForeignFiles() {
    QTemporaryDir dir;
    const std::string text = dir.filePath("t.sqlite").toStdString();
    std::ofstream(text) << "this is not a database, just some text that is long enough......"
                        << std::string(200, 'x');
    auto a = SweepStore::open(text);
    QVERIFY(!a);
    QVERIFY2(a.error().message.find(text) == 0, a.error().message.c_str());
    QVERIFY2(a.error().message.find("not an SQLite database") != std::string::npos,
             a.error().message.c_str());
    auto missing = SweepStore::open(dir.filePath("none.sqlite").toStdString(), false);
    QVERIFY(!missing);
    QVERIFY(missing.error().message.find("no such file") != std::string::npos);
}

void TstSweep::merge() {
    QTemporaryDir dir;
    const std::string a = dir.filePath("a.sqlite").toStdString(),
                      b = dir.filePath("b.sqlite").toStdString(),
                      out = dir.filePath("out.sqlite").toStdString();
    {
        auto sa = SweepStore::open(a);
        auto sb = SweepStore::open(b);
        QVERIFY(sa && sb);
        (*sa)->insert(sampleRow("k1", 1));
        (*sa)->insert(sampleRow("k2", 2));
        (*sb)->insert(sampleRow("k2", 2.5)); // the same point with another cost
        (*sb)->insert(sampleRow("k3", 3));
    }
    auto o = SweepStore::open(out);
    QVERIFY(o);
    auto c1 = (*o)->mergeFrom(a);
    QVERIFY2(c1, c1 ? "" : c1.error().message.c_str());
    QCOMPARE(c1->added, 2LL);
    QCOMPARE(c1->duplicates, 0LL);
    auto c2 = (*o)->mergeFrom(b);
    QVERIFY(c2);
    QCOMPARE(c2->added, 1LL);
    QCOMPARE(c2->duplicates, 1LL);
    QCOMPARE(c2->conflicting, 1LL);
    QCOMPARE(int((*o)->points()->size()), 3);
    auto again = (*o)->mergeFrom(a);
    QVERIFY(again);
    QCOMPARE(again->added, 0LL);
    QCOMPARE(again->conflicting, 0LL);
    QVERIFY(!(*o)->mergeFrom(out)); // itself
    QVERIFY(!(*o)->mergeFrom(dir.filePath("none.sqlite").toStdString()));
}

void TstSweep::dimsAxes() {
    json j = baseSpec();
    j["models"] = {kDecoder, kSqueeze};
    j["dims"] = {{"seq", {16, 32}}, {"past", 8}};
    auto s = parse(j);
    QVERIFY2(s, s ? "" : s.error().message.c_str());
    // The decoder once per seq (past fixed), squeezenet (no free dimensions) once.
    QCOMPARE(int(s->models.size()), 3);
    using Dims = std::map<std::string, std::int64_t>;
    QCOMPARE(s->models[0].dims, (Dims{{"past", 8}, {"seq", 16}}));
    QCOMPARE(s->models[1].dims, (Dims{{"past", 8}, {"seq", 32}}));
    QVERIFY(s->models[2].dims.empty());
    QCOMPARE(s->models[0].net->dims, s->models[0].dims);
    // Twice the sequence: more MACs (the projections double, attention grows too).
    QVERIFY(s->models[1].net->totalMacsPerSample() >
            2 * s->models[0].net->totalMacsPerSample() - 1);
    const auto points = expandSweep(*s);
    QCOMPARE(int(points.size()), 3);
    QVERIFY(points[0].key != points[1].key);
    // A model without free dimensions keeps the key it had before sweeps knew of dims.
    const json search = sweepSearchJson(s->search);
    QCOMPARE(points[2].key, sweepPointKey(s->models[2].sha256, s->hardware[0].json, 1,
                                          points[2].objective, 1, search));
    QCOMPARE(points[0].key, sweepPointKey(s->models[0].sha256, s->hardware[0].json, 1,
                                          points[0].objective, 1, search, s->models[0].dims));
}

void TstSweep::dimsErrors() {
    const auto fails = [](const json& j, const std::string& expected) {
        auto s = parse(j);
        if (s) return std::string("parsed");
        return s.error().message.find(expected) == std::string::npos ? s.error().message
                                                                     : std::string();
    };
    json j = baseSpec();
    j["models"] = {kDecoder};
    j["dims"] = {{"seq", {16, 0}}, {"past", 8}};
    QCOMPARE(fails(j, "spec.json: dims.\"seq\"[1]: expected a whole number from 1 to 2^31 (got 0)"),
             std::string());
    j["dims"] = {{"seq", json::array()}, {"past", 8}};
    QCOMPARE(fails(j, "spec.json: dims.\"seq\": expected a size or a non-empty list"),
             std::string());
    j["dims"] = {{"seq", 16}, {"past", 8}, {"heads", 4}};
    QCOMPARE(fails(j, "spec.json: dims.\"heads\": no model of the spec has a free dimension"),
             std::string());
    j["dims"] = 16;
    QCOMPARE(fails(j, "spec.json: dims: expected an object"), std::string());
    // A free dimension the spec leaves unbound: the importer's message, at the model's place.
    j["dims"] = {{"seq", 16}};
    QCOMPARE(fails(j, "spec.json: models[0]: "), std::string());
    QVERIFY(parse(j).error().message.find("past") != std::string::npos);
}

void TstSweep::dimsPointRecordsBindings() {
    json j = baseSpec();
    j["models"] = {kDecoder};
    j["hardware"] = {"testchip"};
    j["dims"] = {{"seq", 16}, {"past", 8}};
    j["search"] = {{"iterations", 5}, {"chains", 1}};
    auto s = parse(j);
    QVERIFY2(s, s ? "" : s.error().message.c_str());
    const auto points = expandSweep(*s);
    QCOMPARE(int(points.size()), 1);
    const SweepRow row = runSweepPoint(*s, points[0]);
    QCOMPARE(row.dims, std::string(R"({"past":8,"seq":16})"));
    QCOMPARE(sweepRowToJson(row)["dims"].get<std::string>(), row.dims);
    QCOMPARE(sweepRowFromJson(sweepRowToJson(row))->dims, row.dims);
    QTemporaryDir dir;
    auto st = SweepStore::open(dir.filePath("d.sqlite").toStdString());
    QVERIFY(st);
    QVERIFY(*(*st)->insert(row));
    QCOMPARE((*(*st)->rows())[0].dims, row.dims);
}

namespace {

json schema1Spec() {
    return {{"models", {kSqueeze}},
            {"hardware", {"testchip"}},
            {"batches", {1, 2}},
            {"search", {{"iterations", 5}, {"chains", 1}}}};
}

int userVersion(const std::string& path) {
    auto st = SweepStore::open(path, false);
    if (!st) return -1;
    // The version is what open() checked; read it from the file itself to see the migration.
    std::ifstream f(path, std::ios::binary);
    unsigned char header[64] = {};
    f.read(reinterpret_cast<char*>(header), sizeof header);
    return (header[60] << 24) | (header[61] << 16) | (header[62] << 8) | header[63];
}

} // namespace

void TstSweep::schema1Migrates() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("old.sqlite").toStdString();
    QVERIFY(QFile::copy(QString::fromStdString(kSchema1), QString::fromStdString(path)));
    QCOMPARE(userVersion(path), 1);
    {
        auto st = SweepStore::open(path); // read-write: migrated to schema 2
        QVERIFY2(st, st ? "" : st.error().message.c_str());
        auto rows = (*st)->rows();
        QVERIFY(rows);
        QCOMPARE(int(rows->size()), 2);
        for (const SweepRow& r : *rows) {
            QVERIFY(r.dims.empty());
            QVERIFY(r.valid);
            QVERIFY(r.cost > 0);
        }
        // The points the old sweep stored are the points the same spec expands to now: a
        // rerun skips them.
        auto spec = parse(schema1Spec());
        QVERIFY(spec);
        std::set<std::string> keys;
        for (const SweepPoint& p : expandSweep(*spec))
            keys.insert(p.key);
        QCOMPARE(*(*st)->points(), keys);
        SweepRow r = sampleRow("k-new", 4);
        r.dims = R"({"seq":512})";
        QVERIFY(*(*st)->insert(r));
    }
    QCOMPARE(userVersion(path), SweepStore::schemaVersion());
    auto again = SweepStore::open(path); // migrating twice is a no-op
    QVERIFY(again);
    auto rows = (*again)->rows();
    QVERIFY(rows);
    QCOMPARE(int(rows->size()), 3);
    const auto it = std::find_if(rows->begin(), rows->end(),
                                 [](const SweepRow& r) { return r.point == "k-new"; });
    QVERIFY(it != rows->end());
    QCOMPARE(it->dims, std::string(R"({"seq":512})"));
}

void TstSweep::schema1ReadOnlyAndMerge() {
    QTemporaryDir dir;
    const std::string old = dir.filePath("old.sqlite").toStdString();
    QVERIFY(QFile::copy(QString::fromStdString(kSchema1), QString::fromStdString(old)));
    {
        // Read-only (the viewer): rows without dims, the file left at schema 1.
        auto st = SweepStore::open(old, false);
        QVERIFY2(st, st ? "" : st.error().message.c_str());
        auto rows = (*st)->rows();
        QVERIFY(rows);
        QCOMPARE(int(rows->size()), 2);
        QVERIFY((*rows)[0].dims.empty());
    }
    QCOMPARE(userVersion(old), 1);
    // Merging a schema-1 shard into a new database.
    auto out = SweepStore::open(dir.filePath("out.sqlite").toStdString());
    QVERIFY(out);
    auto c = (*out)->mergeFrom(old);
    QVERIFY2(c, c ? "" : c.error().message.c_str());
    QCOMPARE(c->added, 2LL);
    QCOMPARE(int((*(*out)->rows()).size()), 2);
}

QTEST_GUILESS_MAIN(TstSweep)
#include "tst_sweep.moc"
