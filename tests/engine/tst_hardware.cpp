// Hardware templates: presets with the defaults of docs/method.md §1, the sample files, and clear
// errors.
#include "eval/linkload.h"
#include "hw/hardware.h"
#include "hw/mesh.h"
#include "search/search.h"
#include "util/fileio.h"

#include <QtTest>

using namespace tilescope;

class TestHardware : public QObject {
    Q_OBJECT
  private slots:
    void presetsHaveSpecDefaults_data();
    void presetsHaveSpecDefaults();
    void sampleFilesMatchPresets_data();
    void sampleFilesMatchPresets();
    void dramRunsSample();
    void loadOrderKey();
    void channelSplitKey();
    void stageBytesKey();
    void dramPortsKey();
    void jsonRoundTrip();
    void dramModelKeys();
    void badTemplates_data();
    void badTemplates();
    void loadNamesMissingFile();
    void sramTable();
    void linkCapacityAndUtilisation();
    void tileLoadFigures();
    void chipletsParseAndRoundTrip();
    void chipletPreset();
    void waferPreset();
    void chipletLinkClasses();
    void methodCores();
};

void TestHardware::presetsHaveSpecDefaults_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("x");
    QTest::addColumn<int>("y");
    QTest::addColumn<double>("dram");
    // DRAM: 0.5 GB/s per TOPS, TOPS = 2 x 1024 MACs x tiles / 1024 = 2 x tiles; at 1 GHz
    // 1 GB/s is 1 B/cycle: 4x4 -> 32 TOPS -> 16 B/cycle; 12x12 -> 288 -> 144; 2x2 -> 8 -> 4.
    QTest::newRow("edge") << "edge" << 4 << 4 << 16.0;
    QTest::newRow("cloud") << "cloud" << 12 << 12 << 144.0;
    QTest::newRow("testchip") << "testchip" << 2 << 2 << 4.0;
}

void TestHardware::presetsHaveSpecDefaults() {
    QFETCH(QString, name);
    QFETCH(int, x);
    QFETCH(int, y);
    QFETCH(double, dram);
    Hardware hw;
    QVERIFY(presetHardware(name.toStdString(), hw));
    QCOMPARE(hw.meshX, x);
    QCOMPARE(hw.meshY, y);
    QCOMPARE(hw.macsPerTile, 1024);
    QCOMPARE(hw.bufferBytes, 1024.0 * 1024);
    QCOMPARE(hw.clockGHz, 1.0);
    QCOMPARE(hw.dataBits, 8);
    QCOMPARE(hw.dramBytesPerCycle, dram);
    QCOMPARE(hw.nocBytesPerCycle, 24.0);
    QCOMPARE(hw.energy.dramPjPerBit, 7.5);
    QCOMPARE(hw.energy.nocPjPerBitHop, 0.7);
    QCOMPARE(hw.energy.macPj, 0.018);
    QCOMPARE(int(hw.dramSides.size()), 2);
    QCOMPARE(hw.dramSides[0], MeshSide::West);
    QCOMPARE(hw.dramSides[1], MeshSide::East);
    // The DRAM model's defaults keep the bandwidth-only figures: no latency, four loads in
    // flight per tile, no per-side limit.
    QCOMPARE(hw.dramLatencyCycles, 0.0);
    QCOMPARE(hw.maxOutstandingLoads, 4);
    QCOMPARE(hw.dramPortBytesPerCycle, 0.0);
}

void TestHardware::sampleFilesMatchPresets_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("preset");
    QTest::newRow("edge") << "edge-4x4.json"
                          << "edge";
    QTest::newRow("cloud") << "cloud-12x12.json"
                           << "cloud";
    QTest::newRow("eyeriss") << "eyeriss-4x4.json"
                             << "eyeriss";
    QTest::newRow("testchip") << "testchip-2x2.json"
                              << "testchip";
    QTest::newRow("cim") << "cim-4x4.json"
                         << "cim";
    QTest::newRow("chiplet") << "chiplet-8x8.json"
                             << "chiplet";
    QTest::newRow("wafer") << "wafer-32x32.json"
                           << "wafer";
}

void TestHardware::sampleFilesMatchPresets() {
    QFETCH(QString, file);
    QFETCH(QString, preset);
    auto hw = loadHardware(std::string(TILESCOPE_SAMPLES) + "/hw/" + file.toStdString());
    QVERIFY2(hw.ok(), hw.ok() ? "" : hw.error().message.c_str());
    Hardware p;
    presetHardware(preset.toStdString(), p);
    QCOMPARE(hardwareToJson(*hw), hardwareToJson(p));
    // A preset name loads the same hardware.
    auto byName = loadHardware(preset.toStdString());
    QVERIFY(byName.ok());
    QCOMPARE(hardwareToJson(*byName), hardwareToJson(p));
}

// The sample with a DRAM run model (docs/hardware-format.md "DRAM runs") is edge with
// 64-byte bursts and 20 cycles a run, nothing else changed.
// tile.load_order reads and writes back; auto is the default and is not written.
void TestHardware::loadOrderKey() {
    auto hw = parseHardware(R"({"tile": {"load_order": "inputs-first"}})", "hw.json");
    QVERIFY(hw.ok());
    QCOMPARE(hw->loadOrder, LoadOrder::InputsFirst);
    auto again = parseHardware(hardwareToJson(*hw).dump(), "again.json");
    QVERIFY(again.ok());
    QCOMPARE(again->loadOrder, LoadOrder::InputsFirst);
    Hardware edge;
    presetHardware("edge", edge);
    QVERIFY(!hardwareToJson(edge)["tile"].contains("load_order"));
}

// tile.channel_split reads and writes back; off is the default and is not written; the
// mapper takes it from the template.
void TestHardware::channelSplitKey() {
    auto hw = parseHardware(R"({"tile": {"channel_split": true}})", "hw.json");
    QVERIFY(hw.ok());
    QVERIFY(hw->channelSplit);
    const auto j = hardwareToJson(*hw);
    QCOMPARE(j["tile"]["channel_split"].get<bool>(), true);
    auto again = parseHardware(j.dump(), "again.json");
    QVERIFY(again.ok());
    QVERIFY(again->channelSplit);
    Hardware edge;
    presetHardware("edge", edge);
    QVERIFY(!edge.channelSplit);
    QVERIFY(!hardwareToJson(edge)["tile"].contains("channel_split"));
}

// tile.stage_bytes reads and writes back; absent (0) is the default and is not written.
void TestHardware::stageBytesKey() {
    auto hw = parseHardware(R"({"tile": {"stage_bytes": 4096}})", "hw.json");
    QVERIFY(hw.ok());
    QCOMPARE(hw->stageBytes, 4096LL);
    const auto j = hardwareToJson(*hw);
    QCOMPARE(j["tile"]["stage_bytes"].get<long long>(), 4096LL);
    auto again = parseHardware(j.dump(), "again.json");
    QVERIFY(again.ok());
    QCOMPARE(again->stageBytes, 4096LL);
    Hardware edge;
    presetHardware("edge", edge);
    QCOMPARE(edge.stageBytes, 0LL);
    QVERIFY(!hardwareToJson(edge)["tile"].contains("stage_bytes"));
}

// dram.ports: "nearest" (the default, not written back) or "interleaved" (written back);
// edge and eyeriss interleave as the reference's 4x4 chip does, cloud does not.
void TestHardware::dramPortsKey() {
    auto hw = parseHardware(R"({"dram": {"ports": "interleaved"}})", "hw.json");
    QVERIFY(hw.ok());
    QVERIFY(hw->dramInterleaved);
    const auto j = hardwareToJson(*hw);
    QCOMPARE(j["dram"]["ports"].get<std::string>(), std::string("interleaved"));
    auto again = parseHardware(j.dump(), "again.json");
    QVERIFY(again.ok() && again->dramInterleaved);
    auto nearest = parseHardware(R"({"dram": {"ports": "nearest"}})", "hw.json");
    QVERIFY(nearest.ok() && !nearest->dramInterleaved);
    QVERIFY(!hardwareToJson(*nearest)["dram"].contains("ports"));
    for (const char* name : {"edge", "eyeriss", "cloud", "wafer"}) {
        Hardware p;
        QVERIFY(presetHardware(name, p));
        QCOMPARE(p.dramInterleaved, std::string(name) == "edge" || std::string(name) == "eyeriss");
    }
}

void TestHardware::dramRunsSample() {
    auto hw = loadHardware(std::string(TILESCOPE_SAMPLES) + "/hw/edge-dram-runs-4x4.json");
    QVERIFY2(hw.ok(), hw.ok() ? "" : hw.error().message.c_str());
    QCOMPARE(hw->dramBurstBytes, 64);
    QCOMPARE(hw->dramRunOverheadCycles, 20.0);
    QVERIFY(dramRunModel(*hw).active());
    Hardware edge;
    presetHardware("edge", edge);
    QVERIFY(!dramRunModel(edge).active());
    edge.name = hw->name;
    edge.dramBurstBytes = 64;
    edge.dramRunOverheadCycles = 20;
    QCOMPARE(hardwareToJson(*hw), hardwareToJson(edge));
}

void TestHardware::jsonRoundTrip() {
    Hardware hw = defaultHardware(6, 3, "odd");
    hw.arch = TileArch::Cim;
    hw.cim.rows = 128;
    hw.cim.doubleBufferedCrossbars = true;
    hw.cim.slicing = CimSlicing::Crossbars;
    hw.cim.binding = CimBinding::OutputChannels;
    hw.macsPerTile = hw.cim.peakMacs(hw.dataBits); // a cim tile's MACs follow its crossbars
    hw.stripe = 3;
    hw.dramSides = {MeshSide::North};
    hw.nocBytesPerCycle = 32;
    hw.dramLatencyCycles = 120.5;
    hw.maxOutstandingLoads = 7;
    hw.dramPortBytesPerCycle = 12;
    auto back = parseHardware(hardwareToJson(hw), "mem");
    QVERIFY(back.ok());
    QCOMPARE(hardwareToJson(*back), hardwareToJson(hw));
    QCOMPARE(back->arch, TileArch::Cim);
    QCOMPARE(back->cim.rows, 128);
    QVERIFY(back->cim.doubleBufferedCrossbars);
    QCOMPARE(back->cim.slicing, CimSlicing::Crossbars);
    QCOMPARE(back->cim.binding, CimBinding::OutputChannels);
    QCOMPARE(back->cim.weightColumns(8), 64); // a logical crossbar: one cell per weight per slice
    QCOMPARE(back->cim.slices(8), 4);
    QCOMPARE(back->meshX, 6);
    QCOMPARE(back->dramLatencyCycles, 120.5);
    QCOMPARE(back->maxOutstandingLoads, 7);
    QCOMPARE(back->dramPortBytesPerCycle, 12.0);
}

void TestHardware::dramModelKeys() {
    auto hw = parseHardware(
        R"({"dram": {"latency_cycles": 150, "max_outstanding_loads": 1, "port_bytes_per_cycle": 0}})",
        "hw.json");
    QVERIFY2(hw.ok(), hw.ok() ? "" : hw.error().message.c_str());
    QCOMPARE(hw->dramLatencyCycles, 150.0);
    QCOMPARE(hw->maxOutstandingLoads, 1);
    QCOMPARE(hw->dramPortBytesPerCycle, 0.0); // 0 is allowed: no per-side limit
    // The other dram keys keep their defaults when only these are given.
    QCOMPARE(hw->dramBytesPerCycle, 16.0);
    QCOMPARE(int(hw->dramSides.size()), 2);
    hw = parseHardware(R"({"dram": {"port_bytes_per_cycle": 36.5}})", "hw.json");
    QVERIFY(hw.ok());
    QCOMPARE(hw->dramPortBytesPerCycle, 36.5);
    QCOMPARE(hw->maxOutstandingLoads, 4);
}

void TestHardware::badTemplates_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    struct Bad {
        const char* what;
        const char* json;
        const char* message;
    };
    const Bad cases[] = {
        {"zero tiles", R"({"mesh": {"x": 0, "y": 4}})",
         "hw.json: mesh.x: must be positive (got 0)"},
        {"negative bandwidth", R"({"noc": {"link_bytes_per_cycle": -24}})",
         "hw.json: noc.link_bytes_per_cycle: must be positive (got -24)"},
        {"negative dram", R"({"dram": {"bytes_per_cycle": -1}})",
         "hw.json: dram.bytes_per_cycle: must be positive (got -1)"},
        {"unknown key", R"({"mesh": {"x": 4, "y": 4, "z": 2}})", "hw.json: mesh.z: unknown key"},
        {"unknown top key", R"({"meshes": 4})", "hw.json: meshes: unknown key"},
        {"bad side", R"({"dram": {"sides": ["up"]}})", "hw.json: dram.sides: unknown side \"up\""},
        {"bad ports", R"({"dram": {"ports": "all"}})",
         "hw.json: dram.ports: expected \"nearest\" or \"interleaved\", got \"all\""},
        {"not json", "{mesh", "hw.json: byte 2: invalid JSON"},
        {"string number", R"({"tile": {"macs": "1024"}})", "hw.json: tile.macs: expected a number"},
        {"name not a string", R"({"name": {"link": 25}})", "hw.json: name: expected a string"},
        {"fraction", R"({"tile": {"macs": 10.5}})",
         "hw.json: tile.macs: expected a whole number (got 10.5)"},
        {"arch", R"({"tile": {"arch": "gpu"}})",
         "hw.json: tile.arch: expected \"nvdla\" or \"cim\""},
        {"channel split", R"({"tile": {"channel_split": "yes"}})",
         "hw.json: tile.channel_split: expected true or false, got \"yes\""},
        {"load order", R"({"tile": {"load_order": "rows-first"}})",
         "hw.json: tile.load_order: expected \"auto\", \"weights-first\" or \"inputs-first\""},
        {"zero stage bytes", R"({"tile": {"stage_bytes": 0}})",
         "hw.json: tile.stage_bytes: must be positive (got 0)"},
        {"negative stage bytes", R"({"tile": {"stage_bytes": -64}})",
         "hw.json: tile.stage_bytes: must be positive (got -64)"},
        {"fractional stage bytes", R"({"tile": {"stage_bytes": 100.5}})",
         "hw.json: tile.stage_bytes: expected a whole number (got 100.5)"},
        {"stage bytes as text", R"({"tile": {"stage_bytes": "4k"}})",
         "hw.json: tile.stage_bytes: expected a number"},
        {"negative latency", R"({"dram": {"latency_cycles": -1}})",
         "hw.json: dram.latency_cycles: must be non-negative (got -1)"},
        {"zero loads in flight", R"({"dram": {"max_outstanding_loads": 0}})",
         "hw.json: dram.max_outstanding_loads: must be positive (got 0)"},
        {"negative loads in flight", R"({"dram": {"max_outstanding_loads": -2}})",
         "hw.json: dram.max_outstanding_loads: must be positive (got -2)"},
        {"fractional loads in flight", R"({"dram": {"max_outstanding_loads": 1.5}})",
         "hw.json: dram.max_outstanding_loads: expected a whole number (got 1.5)"},
        {"negative port bandwidth", R"({"dram": {"port_bytes_per_cycle": -4}})",
         "hw.json: dram.port_bytes_per_cycle: must be non-negative (got -4)"},
        {"unknown dram key", R"({"dram": {"latency": 100}})", "hw.json: dram.latency: unknown key"},
        // Compute-in-memory tiles: every cim field is checked and named.
        {"cim on a mac array", R"({"cim": {"cores": 4}})",
         "hw.json: cim: only for a tile.arch \"cim\" template"},
        {"cim zero cores", R"({"tile": {"arch": "cim"}, "cim": {"cores": 0}})",
         "hw.json: cim.cores: must be positive (got 0)"},
        {"cim fractional rows", R"({"tile": {"arch": "cim"}, "cim": {"rows": 64.5}})",
         "hw.json: cim.rows: expected a whole number (got 64.5)"},
        {"cim unknown key", R"({"tile": {"arch": "cim"}, "cim": {"crossbar_bytes": 9}})",
         "hw.json: cim.crossbar_bytes: unknown key"},
        {"cim bits per cell", R"({"tile": {"arch": "cim"}, "cim": {"bits_per_cell": 9}})",
         "hw.json: cim.bits_per_cell: at most 8 bits per cell"},
        {"cim narrow crossbar",
         R"({"tile": {"arch": "cim"}, "cim": {"cols": 3, "bits_per_cell": 2}})",
         "hw.json: cim.cols: 3 cells cannot hold one 8-bit weight at 2 bits per cell (needs 4)"},
        {"cim small psum buffer", R"({"tile": {"arch": "cim"}, "cim": {"psum_buffer_bytes": 32}})",
         "hw.json: cim.psum_buffer_bytes: must hold one crossbar's partial sums (16 x 4 bytes = "
         "64)"},
        {"cim negative write energy",
         R"({"tile": {"arch": "cim"}, "cim": {"write_pj_per_bit": -1}})",
         "hw.json: cim.write_pj_per_bit: must be non-negative (got -1)"},
        {"cim zero mvm cycles", R"({"tile": {"arch": "cim"}, "cim": {"mvm_cycles": 0}})",
         "hw.json: cim.mvm_cycles: must be positive (got 0)"},
        {"cim double buffering not a bool",
         R"({"tile": {"arch": "cim"}, "cim": {"double_buffered_crossbars": 1}})",
         "hw.json: cim.double_buffered_crossbars: expected true or false"},
        {"cim weight slicing", R"({"tile": {"arch": "cim"}, "cim": {"weight_slicing": "bits"}})",
         "hw.json: cim.weight_slicing: expected \"cells\" or \"crossbars\""},
        {"cim core binding", R"({"tile": {"arch": "cim"}, "cim": {"core_binding": 2}})",
         "hw.json: cim.core_binding: expected \"tile\" or \"output-channels\""},
        {"cim psum buffer of a logical crossbar",
         R"({"tile": {"arch": "cim"}, "cim": {"weight_slicing": "crossbars", "psum_buffer_bytes": 128}})",
         "hw.json: cim.psum_buffer_bytes: must hold one crossbar's partial sums (64 x 4 bytes = "
         "256)"},
        {"cim slow writes", R"({"tile": {"arch": "cim"}, "cim": {"write_cycles_per_row": 1e7}})",
         "hw.json: cim.write_cycles_per_row: at most 10^6 cycles"},
        {"cim peak beyond range",
         R"({"tile": {"arch": "cim"}, "cim": {"cores": 1024, "crossbars_per_core": 1024, "rows": 4096, "mvm_cycles": 0.001}})",
         "hw.json: cim: more than 10^9 MACs per cycle per tile"},
        {"cim macs disagree", R"({"tile": {"arch": "cim", "macs": 1024}})",
         "hw.json: tile.macs: a cim tile's MACs per cycle follow from cim"},
        // Chiplets: counts that divide the mesh, positive; the link figures checked and named.
        {"chiplets not dividing x", R"({"mesh": {"x": 8, "y": 8}, "chiplets": {"x": 3, "y": 2}})",
         "hw.json: chiplets.x: 3 chiplets do not divide the mesh's 8 columns evenly"},
        {"chiplets not dividing y", R"({"mesh": {"x": 8, "y": 6}, "chiplets": {"x": 2, "y": 4}})",
         "hw.json: chiplets.y: 4 chiplets do not divide the mesh's 6 rows evenly"},
        {"chiplets zero", R"({"chiplets": {"x": 0}})",
         "hw.json: chiplets.x: must be positive (got 0)"},
        {"chiplets negative", R"({"chiplets": {"y": -2}})",
         "hw.json: chiplets.y: must be positive (got -2)"},
        {"chiplets fractional", R"({"chiplets": {"x": 1.5}})",
         "hw.json: chiplets.x: expected a whole number (got 1.5)"},
        {"chiplets zero bandwidth", R"({"chiplets": {"x": 2, "link_bytes_per_cycle": 0}})",
         "hw.json: chiplets.link_bytes_per_cycle: must be positive (got 0)"},
        {"chiplets negative energy", R"({"chiplets": {"x": 2, "pj_per_bit_hop": -1}})",
         "hw.json: chiplets.pj_per_bit_hop: must be "
         "non-negative (got -1)"},
        {"chiplets unknown key", R"({"chiplets": {"x": 2, "z": 2}})",
         "hw.json: chiplets.z: unknown key"},
        {"unsorted sram", R"({"energy": {"sram_pj_per_byte": [[2048, 1], [1024, 2]]}})",
         "hw.json: energy.sram_pj_per_byte[1]: entries must be sorted"},
        {"negative buffer read energy", R"({"energy": {"buffer_read_pj_per_byte": -1}})",
         "hw.json: energy.buffer_read_pj_per_byte: must be non-negative (got -1)"},
        // In-tile storage levels: every field checked and named by its level's index.
        {"levels not a list", R"({"tile": {"levels": {"name": "al1"}}})",
         "hw.json: tile.levels: expected a list of levels"},
        {"level without bytes", R"({"tile": {"levels": [{"name": "al1", "holds": ["input"]}]}})",
         "hw.json: tile.levels[0].bytes: required"},
        {"level zero bytes",
         R"({"tile": {"levels": [{"name": "al1", "bytes": 0, "holds": ["input"]}]}})",
         "hw.json: tile.levels[0].bytes: must be positive (got 0)"},
        {"level unknown operand",
         R"({"tile": {"levels": [{"name": "a", "bytes": 8, "holds": ["input"]}, {"name": "p", "bytes": 8, "holds": ["psum"]}]}})",
         "hw.json: tile.levels[1].holds: unknown operand \"psum\" (input, weight, output)"},
        {"level holds nothing",
         R"({"tile": {"levels": [{"name": "al1", "bytes": 8, "holds": []}]}})",
         "hw.json: tile.levels[0].holds: expected a non-empty list"},
        {"level reserved name",
         R"({"tile": {"levels": [{"name": "buffer", "bytes": 8, "holds": ["input"]}]}})",
         "hw.json: tile.levels[0].name: \"buffer\" is a key of the energy breakdown already"},
        {"level named twice",
         R"({"tile": {"levels": [{"name": "l1", "bytes": 8, "holds": ["input"]}, {"name": "l1", "bytes": 8, "holds": ["weight"]}]}})",
         "hw.json: tile.levels[1].name: \"l1\" is listed twice"},
        {"level negative energy",
         R"({"tile": {"levels": [{"name": "al1", "bytes": 8, "holds": ["input"], "read_pj_per_byte": -0.5}]}})",
         "hw.json: tile.levels[0].read_pj_per_byte: must be non-negative (got -0.5)"},
        {"level zero fanout",
         R"({"tile": {"levels": [{"name": "al1", "bytes": 8, "holds": ["input"], "fanout": 0}]}})",
         "hw.json: tile.levels[0].fanout: must be positive (got 0)"},
        {"level unknown key",
         R"({"tile": {"levels": [{"name": "al1", "bytes": 8, "holds": ["input"], "width": 8}]}})",
         "hw.json: tile.levels[0].width: unknown key"},
        {"levels on cim tiles",
         R"({"tile": {"arch": "cim", "levels": [{"name": "al1", "bytes": 8, "holds": ["input"]}]}})",
         "hw.json: tile.levels: only for MAC-array tiles"},
    };
    for (const Bad& c : cases)
        QTest::newRow(c.what) << QString(c.json) << QString(c.message);
}

void TestHardware::badTemplates() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    auto hw = parseHardware(json.toStdString(), "hw.json");
    QVERIFY(!hw.ok());
    QVERIFY2(QString::fromStdString(hw.error().message).startsWith(message),
             hw.error().message.c_str());
}

void TestHardware::loadNamesMissingFile() {
    auto hw = loadHardware("/nonexistent/hw.json");
    QVERIFY(!hw.ok());
    QCOMPARE(QString::fromStdString(hw.error().message),
             QString("/nonexistent/hw.json: no such file, and not a preset (edge, cloud, eyeriss, "
                     "testchip, cim, chiplet, wafer)"));
}

void TestHardware::sramTable() {
    Hardware hw = defaultHardware(4, 4, "edge");
    // Exact table points, clamping outside, log-linear between 256 KiB (0.55) and 1 MiB (1.05):
    // 512 KiB is half way in log2 -> 0.80.
    QCOMPARE(hw.energy.sramPjPerByte(1024 * 1024), 1.05);
    QCOMPARE(hw.energy.sramPjPerByte(1024), 0.18);
    QCOMPARE(hw.energy.sramPjPerByte(1e9), 2.0);
    QVERIFY(qFuzzyCompare(hw.energy.sramPjPerByte(512 * 1024), 0.80));
}

// Link capacity by hand for the edge preset: NoC links 24 B/cycle; DRAM 16 B/cycle split
// over its two sides (west, east), each side over its 4 edge tiles: 16 / 2 / 4 = 2.
void TestHardware::linkCapacityAndUtilisation() {
    Hardware hw;
    QVERIFY(presetHardware("edge", hw));
    const Mesh mesh(hw);
    const int inner = mesh.outLink(mesh.tileId(1, 1), East);
    const int westOut = mesh.outLink(mesh.tileId(0, 2), West);
    const int eastIn = mesh.portInLink(mesh.tileId(3, 0), East);
    QVERIFY(!mesh.isPortLink(inner));
    QVERIFY(mesh.isPortLink(westOut) && mesh.isPortLink(eastIn));
    QCOMPARE(mesh.linkCapacity(inner), 24.0);
    QCOMPARE(mesh.linkCapacity(westOut), 2.0);
    QCOMPARE(mesh.linkCapacity(eastIn), 2.0);

    Evaluation e;
    e.delay = 100;
    e.linkBytes.assign(size_t(mesh.linkCount()), 0.0);
    e.linkBytes[size_t(inner)] = 1200;  // 1200 / (24 x 100)
    e.linkBytes[size_t(westOut)] = 100; // 100 / (2 x 100)
    const std::vector<double> u = linkUtilisation(e, hw);
    QCOMPARE(u.size(), e.linkBytes.size());
    QCOMPARE(u[size_t(inner)], 0.5);
    QCOMPARE(u[size_t(westOut)], 0.5);
    QCOMPARE(u[size_t(eastIn)], 0.0);
    QCOMPARE(linkUtilisation(e, mesh, -1), 0.0);
    e.delay = 0;
    QCOMPARE(linkUtilisation(e, mesh, inner), 0.0);
}

// The heatmap's tile figures: busy time over the delay per tile (snake positions mapped to
// tile ids), optionally only some leaves', and the leaf busiest on each tile.
void TestHardware::tileLoadFigures() {
    Evaluation e;
    e.delay = 100;
    e.tileOrder = {0, 1, 3, 2};
    BusyInterval a;
    a.node = 5, a.start = 0, a.end = 40, a.tileBegin = 0, a.tileCount = 2; // tiles 0, 1
    BusyInterval b;
    b.node = 7, b.start = 40, b.end = 90, b.tileBegin = 1, b.tileCount = 2; // tiles 1, 3
    e.intervals = {a, b};
    const TileLoad all = tileLoad(e, 4);
    QCOMPARE(all.busy, (std::vector<double>{0.4, 0.9, 0.0, 0.5}));
    QCOMPARE(all.dominantLeaf, (std::vector<int>{5, 7, -1, 7}));
    const TileLoad only5 = tileLoad(e, 4, [](int node) { return node == 5; });
    QCOMPARE(only5.busy, (std::vector<double>{0.4, 0.4, 0.0, 0.0}));
    QCOMPARE(only5.dominantLeaf, all.dominantLeaf); // the busiest leaf ignores the filter
    e.delay = 0;
    QCOMPARE(tileLoad(e, 4).busy, (std::vector<double>(4, 0.0)));
}

// The "chiplets" object: parsed, kept by hardwareToJson (and absent from a single-chip
// template's JSON, which stays as it was).
void TestHardware::chipletsParseAndRoundTrip() {
    auto hw = parseHardware(std::string(R"({"mesh": {"x": 6, "y": 4}, "chiplets": {"x": 3, "y": 2,)"
                                        R"( "link_bytes_per_cycle": 6, "pj_per_bit_hop": 1.75}})"),
                            "hw.json");
    QVERIFY2(hw.ok(), hw.ok() ? "" : hw.error().message.c_str());
    QCOMPARE(hw->chiplets.x, 3);
    QCOMPARE(hw->chiplets.y, 2);
    QCOMPARE(hw->chiplets.linkBytesPerCycle, 6.0);
    QCOMPARE(hw->chiplets.pjPerBitHop, 1.75);
    const nlohmann::json j = hardwareToJson(*hw);
    QVERIFY(j.contains("chiplets"));
    QCOMPARE(j["chiplets"]["x"].get<int>(), 3);
    auto back = parseHardware(j, "mem");
    QVERIFY(back.ok());
    QCOMPARE(hardwareToJson(*back), j);
    QVERIFY(back->chiplets == hw->chiplets);
    // Defaults for the link figures when only the counts are given.
    auto counts = parseHardware(std::string(R"({"chiplets": {"x": 2, "y": 1}})"), "hw.json");
    QVERIFY(counts.ok());
    QCOMPARE(counts->chiplets.linkBytesPerCycle, 8.0);
    QCOMPARE(counts->chiplets.pjPerBitHop, 2.0);
    // One chiplet: the template of today, its JSON without the key.
    Hardware edge;
    QVERIFY(presetHardware("edge", edge));
    QCOMPARE(edge.chiplets.count(), 1);
    QVERIFY(!hardwareToJson(edge).contains("chiplets"));
    QVERIFY(!Mesh(edge).hasChiplets());
}

// The wafer-scale preset: the cloud tile on a 32x32 mesh, DRAM on all four sides at the
// 0.5 GB/s per TOPS rule (2 x 1024 MACs x 1024 tiles / 1024 = 2048 TOPS -> 1024 B/cycle at
// 1 GHz), EDP as its default objective like any template but edge, testchip and cloud.
void TestHardware::waferPreset() {
    auto hw = loadHardware("wafer");
    QVERIFY(hw.ok());
    QCOMPARE(hw->meshX, 32);
    QCOMPARE(hw->meshY, 32);
    QCOMPARE(hw->macsPerTile, 1024);
    QCOMPARE(hw->bufferBytes, 1024.0 * 1024);
    QCOMPARE(hw->clockGHz, 1.0);
    QCOMPARE(hw->peakTops(), 2048.0);
    QCOMPARE(hw->dramBytesPerCycle, 1024.0);
    const std::vector<MeshSide> sides = {MeshSide::West, MeshSide::East, MeshSide::North,
                                         MeshSide::South};
    QVERIFY(hw->dramSides == sides);
    QCOMPARE(hw->chiplets.count(), 1);
    const Objective o = defaultObjective(*hw);
    QCOMPARE(o.n, 1.0);
    QCOMPARE(o.m, 1.0);
    const auto names = presetNames();
    QVERIFY(std::find(names.begin(), names.end(), "wafer") != names.end());
}

void TestHardware::chipletPreset() {
    auto hw = loadHardware("chiplet");
    QVERIFY2(hw.ok(), hw.ok() ? "" : hw.error().message.c_str());
    QCOMPARE(hw->meshX, 8);
    QCOMPARE(hw->meshY, 8);
    QCOMPARE(hw->chiplets.x, 2);
    QCOMPARE(hw->chiplets.y, 2);
    QCOMPARE(hw->chiplets.linkBytesPerCycle, 8.0);
    QCOMPARE(hw->chiplets.pjPerBitHop, 2.0);
    QCOMPARE(hw->dramBytesPerCycle, 64.0); // 0.5 GB/s per TOPS of 64 tiles
    const auto names = presetNames();
    QVERIFY(std::find(names.begin(), names.end(), "chiplet") != names.end());
    // Snake stripes of a chiplet's width: each 16 consecutive positions fill one chiplet,
    // and consecutive chiplets share an edge (serpentine: 0, 2, 3, 1 by chiplet index).
    const Mesh mesh(*hw);
    QVERIFY(mesh.hasChiplets());
    const int order[] = {0, 2, 3, 1};
    for (int pos = 0; pos < mesh.tiles(); ++pos)
        QCOMPARE(mesh.chipletOf(mesh.tileAt(pos)), order[pos / 16]);
}

// By hand on a 4x4 mesh of 2x2 chiplets of 2x2 tiles (DRAM west and east, 16 B/cycle):
// the links between columns 1 and 2 and between rows 1 and 2 cross, 2 x 4 directed links
// each; they carry the inter-chiplet 8 B/cycle at 2 pJ/bit, the other mesh links 24 at
// 0.7; port links keep their DRAM share (16 / 2 sides / 4 tiles = 2) and the NoC energy.
void TestHardware::chipletLinkClasses() {
    Hardware hw = defaultHardware(4, 4, "c");
    hw.chiplets.x = hw.chiplets.y = 2;
    hw.chiplets.linkBytesPerCycle = 8;
    hw.chiplets.pjPerBitHop = 2.0;
    const Mesh mesh(hw);
    QCOMPARE(mesh.chipletWidth(), 2);
    QCOMPARE(mesh.chipletHeight(), 2);
    QCOMPARE(mesh.chipletOf(mesh.tileId(1, 1)), 0);
    QCOMPARE(mesh.chipletOf(mesh.tileId(2, 0)), 1);
    QCOMPARE(mesh.chipletOf(mesh.tileId(0, 2)), 2);
    QCOMPARE(mesh.chipletOf(mesh.tileId(3, 3)), 3);
    const int across = mesh.outLink(mesh.tileId(1, 0), East);
    const int back = mesh.outLink(mesh.tileId(2, 0), West);
    const int down = mesh.outLink(mesh.tileId(3, 1), South);
    const int up = mesh.outLink(mesh.tileId(0, 2), North);
    const int inside = mesh.outLink(mesh.tileId(0, 0), East);
    const int insideV = mesh.outLink(mesh.tileId(2, 2), South);
    const int westPort = mesh.outLink(mesh.tileId(0, 1), West);
    const int eastIn = mesh.portInLink(mesh.tileId(3, 2), East);
    const int bottom = mesh.outLink(mesh.tileId(1, 3), South); // no DRAM there: a port link
    for (int l : {across, back, down, up}) {
        QVERIFY(mesh.crossesChiplet(l));
        QCOMPARE(mesh.linkCapacity(l), 8.0);
        QCOMPARE(mesh.linkPjPerBit(l), 2.0);
        QCOMPARE(mesh.linkSlowness(l), 3.0);
    }
    for (int l : {inside, insideV}) {
        QVERIFY(!mesh.crossesChiplet(l));
        QCOMPARE(mesh.linkCapacity(l), 24.0);
        QCOMPARE(mesh.linkPjPerBit(l), 0.7);
        QCOMPARE(mesh.linkSlowness(l), 1.0);
    }
    for (int l : {westPort, eastIn, bottom}) {
        QVERIFY(mesh.isPortLink(l));
        QVERIFY(!mesh.crossesChiplet(l));
        QCOMPARE(mesh.linkPjPerBit(l), 0.7);
        QCOMPARE(mesh.linkSlowness(l), 1.0);
    }
    QCOMPARE(mesh.linkCapacity(westPort), 2.0);
    QCOMPARE(mesh.linkCapacity(eastIn), 2.0);
    int crossing = 0;
    for (int l = 0; l < mesh.linkCount(); ++l)
        crossing += mesh.crossesChiplet(l);
    QCOMPARE(crossing, 16);
    // A route's slowness is its slowest link's; a route inside a chiplet runs at NoC speed.
    std::vector<int> r;
    mesh.route(mesh.tileId(0, 0), mesh.tileId(3, 0), r);
    QCOMPARE(mesh.routeSlowness(r), 3.0);
    r.clear();
    mesh.route(mesh.tileId(0, 0), mesh.tileId(1, 1), r);
    QCOMPARE(mesh.routeSlowness(r), 1.0);
    // Utilisation follows the per-link capacity: 800 bytes over 100 cycles at 8 B/cycle.
    Evaluation e;
    e.delay = 100;
    e.linkBytes.assign(size_t(mesh.linkCount()), 0.0);
    e.linkBytes[size_t(across)] = 800;
    QCOMPARE(linkUtilisation(e, mesh, across), 1.0);
}

// The method's two cores with the reference implementation's figures (docs/hardware-format.md
// "Storage inside the tile"): edge and cloud of the NVDLA-style core, eyeriss of the
// Eyeriss-style one; the other presets model no in-tile storage.
void TestHardware::methodCores() {
    for (const char* name : {"edge", "cloud"}) {
        Hardware hw;
        QVERIFY(presetHardware(name, hw));
        QCOMPARE(hw.macsPerTile, 1024);
        QCOMPARE(int(hw.levels.size()), 4);
        QCOMPARE(hw.levels[0].name, std::string("al1"));
        QCOMPARE(hw.levels[0].bytes, 8192.0);
        QCOMPARE(hw.levels[0].holds, unsigned(HoldsInput));
        QCOMPARE(hw.levels[1].name, std::string("wl1"));
        QCOMPARE(hw.levels[2].name, std::string("ol1"));
        QCOMPARE(hw.levels[3].name, std::string("ol2"));
        QCOMPARE(hw.levels[3].bytes, 28672.0);
        QCOMPARE(bufferReadPj(hw), 1.0537);  // 0.1317125 x 8
        QCOMPARE(bufferWritePj(hw), 1.8722); // 0.234025 x 8
    }
    Hardware e;
    QVERIFY(presetHardware("eyeriss", e));
    QCOMPARE(e.meshX * e.meshY, 16);
    QCOMPARE(int(e.levels.size()), 3);
    QCOMPARE(e.levels[0].instances, 1024);
    QCOMPARE(e.levels[0].fanout, 1);
    for (const char* name : {"testchip", "cim", "chiplet", "wafer"}) {
        Hardware hw;
        QVERIFY(presetHardware(name, hw));
        QVERIFY(hw.levels.empty());
        QCOMPARE(bufferReadPj(hw), hw.energy.sramPjPerByte(hw.bufferBytes));
    }
}

QTEST_APPLESS_MAIN(TestHardware)
#include "tst_hardware.moc"
