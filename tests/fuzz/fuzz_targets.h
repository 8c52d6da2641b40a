// The functions the fuzz targets (tests/fuzz/fuzz_*.cpp) and the regression test
// (tests/engine/tst_fuzzregressions.cpp) feed bytes to, so a saved crashing input replays
// through exactly the code that crashed. Each returns true when the input was accepted,
// false when it was rejected with an Error; anything else (a crash, an exception escaping,
// a sanitizer report) is a finding.
#pragma once

#include "codegen/instruction_program.h"
#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "model/network_json.h"
#include "model/onnx_import.h"
#include "report/result_json.h"
#include "sim/simulator.h"
#include "tree/ratree.h"
#include "tree/tree_json.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace tilescope::fuzz {

// The fixed network the tree targets parse against: the ten-layer residual network of
// tests/engine/tst_ratree.cpp (smallResNet), so tests/data/trees/ seeds apply as they are.
inline const char* kSmallResJson =
    R"({"format": "tilescope-network", "version": 1, "name": "smallres",
 "inputs": {"input": 3072}, "outputs": ["fc"],
 "layers": [
  {"name": "conv1", "kind": "conv", "op": "Conv", "in": [3, 32, 32], "out": [16, 32, 32],
   "kernel": [3, 3], "pad": [2, 2], "weight_bytes": 448, "inputs": [{"input": "input", "bytes": 3072}]},
  {"name": "pool1", "kind": "pool", "op": "MaxPool", "in": [16, 32, 32], "out": [16, 16, 16],
   "kernel": [2, 2], "stride": [2, 2], "inputs": [{"layer": "conv1"}]},
  {"name": "b1a", "kind": "conv", "op": "Conv", "in": [16, 16, 16], "out": [16, 16, 16],
   "kernel": [3, 3], "pad": [2, 2], "weight_bytes": 2320, "inputs": [{"layer": "pool1"}]},
  {"name": "b1b", "kind": "conv", "op": "Conv", "in": [16, 16, 16], "out": [16, 16, 16],
   "kernel": [3, 3], "pad": [2, 2], "weight_bytes": 2320, "inputs": [{"layer": "b1a"}]},
  {"name": "add1", "kind": "eltwise", "op": "Add", "in": [16, 16, 16], "out": [16, 16, 16],
   "inputs": [{"layer": "pool1"}, {"layer": "b1b"}]},
  {"name": "b2a", "kind": "conv", "op": "Conv", "in": [16, 16, 16], "out": [32, 8, 8],
   "kernel": [3, 3], "stride": [2, 2], "pad": [2, 2], "weight_bytes": 4640, "inputs": [{"layer": "add1"}]},
  {"name": "b2b", "kind": "conv", "op": "Conv", "in": [32, 8, 8], "out": [32, 8, 8],
   "kernel": [3, 3], "pad": [2, 2], "weight_bytes": 9248, "inputs": [{"layer": "b2a"}]},
  {"name": "ds2", "kind": "conv", "op": "Conv", "in": [16, 16, 16], "out": [32, 8, 8],
   "kernel": [1, 1], "stride": [2, 2], "weight_bytes": 544, "inputs": [{"layer": "add1"}]},
  {"name": "add2", "kind": "eltwise", "op": "Add", "in": [32, 8, 8], "out": [32, 8, 8],
   "inputs": [{"layer": "ds2"}, {"layer": "b2b"}]},
  {"name": "fc", "kind": "gemm", "op": "Gemm", "in": [2048, 1, 1], "out": [10, 1, 1],
   "weight_bytes": 20490, "inputs": [{"layer": "add2"}]}
 ]})";

inline const Network& smallRes() {
    static const Network net = [] {
        auto r = parseNetworkJson(kSmallResJson, "smallres.json");
        if (!r) {
            std::fprintf(stderr, "fuzz: the fixed network does not parse: %s\n",
                         r.error().message.c_str());
            std::abort();
        }
        return std::move(r).value();
    }();
    return net;
}

inline const Hardware& edge() {
    static const Hardware hw = [] {
        Hardware h;
        presetHardware("edge", h);
        return h;
    }();
    return hw;
}

// A tree that parsed and passed validateStructure is evaluated as `evaluate` would (the
// batch the tree states), but only up to a batch the evaluator handles in fuzzing time:
// its cost grows with the batch by design, and a tree batch of 2^30 is a valid if silly
// request, not a bug.
inline void evaluateParsed(const RATree& t) {
    const int batch = t.node(t.root).batch;
    if (validateStructure(t, smallRes(), batch)) return;
    if (batch > 4096) return;
    EvalOptions opt;
    opt.detail = true;
    (void)evaluate(smallRes(), edge(), t, batch, opt);
}

inline bool onnx(const std::string& data) {
    return importOnnxBytes(data, "fuzz.onnx").ok();
}

inline bool networkJson(const std::string& data) {
    auto r = parseNetworkJson(data, "fuzz.json");
    if (!r) return false;
    // What the reader accepts must write back and read again to the same layers.
    auto again = parseNetworkJson(networkToJson(*r), "fuzz-roundtrip.json");
    if (!again || again->layers.size() != r->layers.size()) std::abort();
    return true;
}

inline bool hardware(const std::string& data) {
    auto r = parseHardware(data, "fuzz-hw.json");
    if (!r) return false;
    auto again = parseHardware(hardwareToJson(*r), "fuzz-hw-roundtrip.json");
    if (!again || again->tiles() != r->tiles()) std::abort();
    return true;
}

inline bool treeText(const std::string& data) {
    auto r = parseTreeText(data, smallRes(), "fuzz.tree");
    if (!r) return false;
    evaluateParsed(*r);
    return true;
}

inline bool treeJson(const std::string& data) {
    auto r = parseTreeJson(data, smallRes(), "fuzz-tree.json");
    if (!r) return false;
    // Written out and read back, the tree is the same.
    auto again = parseTreeJson(treeToJson(*r, smallRes()), smallRes(), "fuzz-roundtrip.json");
    if (!again || !(*again == *r)) std::abort();
    evaluateParsed(*r);
    return true;
}

// What `evaluate --tree` and `export-instructions` read: tree text, tree JSON, result or
// compare JSON.
inline bool resultJson(const std::string& data) {
    auto r = parseTreeDocument(data, smallRes(), "fuzz-result.json");
    if (!r) return false;
    evaluateParsed(*r);
    return true;
}

// program.bin ends with an FNV-1a checksum; a fuzzer almost never gets it right, so each
// input is decoded as it is and again with the checksum repaired, which lets mutations
// reach the body decoder.
inline bool programBin(const std::string& data) {
    bool ok = decodeProgram(data, "fuzz.bin").ok();
    if (data.size() < 4) return ok;
    std::string fixed = data;
    std::uint32_t h = 2166136261u;
    for (size_t i = 0; i + 4 < fixed.size(); ++i) {
        h ^= std::uint8_t(fixed[i]);
        h *= 16777619u;
    }
    for (int i = 0; i < 4; ++i)
        fixed[fixed.size() - 4 + size_t(i)] = char((h >> (8 * i)) & 0xff);
    auto r = decodeProgram(fixed, "fuzz.bin");
    if (!r) return ok;
    // A decoded program encodes back to the same bytes (the encoding is canonical except
    // for field widths and bases wider than needed and JSON spacing, so compare after one
    // more round).
    const std::string once = encodeProgram(*r);
    auto again = decodeProgram(once, "fuzz-roundtrip.bin");
    if (!again || encodeProgram(*again) != once) std::abort();
    // Then what `simulate` does with it: the embedded template, validation, the replay.
    auto hw = parseHardware(r->hardwareJson, "fuzz.bin (hardware)");
    if (!hw || validateProgram(*r, *hw, "fuzz.bin")) return true;
    (void)simulate(*r, *hw);
    return true;
}

} // namespace tilescope::fuzz
