// The instruction program for a tiled chip (docs/method.md §5): per-tile streams for the LOAD,
// COMPUTE and STORE engines with stage-granular dependencies, and its three encodings
// (program.json, the compact program.bin of docs/isa.md, the readable program.txt).
#pragma once

#include "util/result.h"
#include "util/units.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tilescope {

enum class Engine : std::uint8_t { Load = 0, Compute = 1, Store = 2 };
// LOAD: DRAM or a remote tile -> local buffer (a LOAD from "tile:N" is the receive side of
// N's SEND). COMPUTE: the PE array / vector unit. STORE: local -> DRAM. SEND: local -> the
// buffers of other tiles over the NoC (runs on the STORE engine). PROGRAM: a compute-in-memory
// tile writes weights from its buffer into its crossbars (runs on the COMPUTE engine,
// `cycles` busy cycles, `bytes` the weights written).
enum class Op : std::uint8_t { Load = 0, Compute = 1, Store = 2, Send = 3, Program = 4 };

const char* toString(Engine e);
const char* toString(Op o);
Engine engineOf(Op o);

constexpr int kDram = -1; // endpoint value meaning DRAM
// "dram" or "tile:N": how program.json, program.txt, ir.json and messages name an endpoint.
std::string endpointName(std::int32_t e);

// A dependency at stage granularity (docs/isa.md): stage j (1-based) of the dependent may
// start once stage min(N_p, stage + j - 1) of the producer has finished, N_p being the
// producer's stage count. stage == N_p waits for the whole producer.
struct Dep {
    std::uint32_t id = 0;
    std::uint32_t stage = 1;
    bool operator==(const Dep&) const = default;
};

// A buffer region an instruction touches: the tile's global buffer [offset, offset+bytes).
struct BufferRef {
    std::int32_t tile = 0;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    bool write = false;
    bool operator==(const BufferRef&) const = default;
};

struct Instruction {
    std::uint32_t id = 0; // unique across the program
    Op op = Op::Load;
    std::int32_t tile = 0;            // the tile whose engine queue holds it
    std::int32_t layer = -1;          // index into Program::layers
    std::uint64_t bytes = 0;          // data moved (transfers) or produced (compute)
    std::int32_t src = kDram;         // kDram or a tile id
    std::int32_t dst = kDram;         // kDram or a tile id (the first destination)
    std::vector<std::int32_t> mcast;  // further destination tiles of a multicast
    std::uint32_t stages = 1;         // equal units the instruction completes in order
    std::uint64_t cycles = 0;         // COMPUTE: busy cycles of the engine
    std::array<std::int32_t, 4> lo{}; // data range [b,c,h,w] lower bounds (inclusive)
    std::array<std::int32_t, 4> hi{}; //   ... upper bounds (exclusive); weights: [k,c,r,s]
    // A DRAM LOAD/STORE's descriptor where the template has a run model (docs/isa.md, "DRAM
    // descriptors"): the tensor's layout (a DramLayout, kLayoutCount for weights in their
    // load order, -1 without a run model), where its first element lies in the tensor
    // (element offset), its runs, the bytes of the first and what the DRAM moves for them
    // (whole bursts).
    std::int32_t layout = -1;
    std::uint64_t base = 0, runs = 0, runBytes = 0, burstBytes = 0;
    // A compute-in-memory tile whose cores each run their own stream (docs/isa.md, "Cores"):
    // the core of a PROGRAM or COMPUTE; -1 for the tile's own engines.
    std::int32_t core = -1;
    std::vector<Dep> deps;
    std::vector<BufferRef> buffers;
    bool operator==(const Instruction&) const = default;

    Engine engine() const { return engineOf(op); }
    std::vector<std::int32_t> destinations() const; // dst then mcast
    // Whether `tile` is among its destinations (without building the list: a validation
    // asks this of every SEND a compute depends on, and a multicast has thousands).
    bool sendsTo(std::int32_t tile) const {
        return dst == tile || std::find(mcast.begin(), mcast.end(), tile) != mcast.end();
    }
};

struct TileProgram {
    std::int32_t id = 0, x = 0, y = 0;
    std::vector<Instruction> instructions; // in issue order; engines take theirs in order
    bool operator==(const TileProgram&) const = default;
};

struct Program {
    std::string hardwareJson;        // the template the program was built for
    std::vector<std::string> layers; // layer names, indexed by Instruction::layer
    std::vector<TileProgram> tiles;
    // Figures of the schedule the program implements (empty when unknown): "delay_cycles",
    // "dram_bytes", "energy_pj", "tree", "model", "batch".
    nlohmann::json schedule = nlohmann::json::object();
    bool operator==(const Program&) const = default;

    size_t instructionCount() const;
};

nlohmann::json programToJson(const Program& p);
// program.json streamed: the same document as programToJson, one instruction a line.
void writeProgramJson(std::ostream& out, const Program& p);
Result<Program> programFromJson(const nlohmann::json& j, const std::string& file);
std::string programToText(const Program& p);
void writeProgramText(std::ostream& out, const Program& p);

// program.bin (docs/isa.md). decodeProgram never reads past the input and rejects any
// malformed byte string with an Error naming `file`, the byte offset and the reason.
std::string encodeProgram(const Program& p);
// The same bytes streamed (a large program never sits in memory twice).
void writeProgramBin(std::ostream& out, const Program& p);
Result<Program> decodeProgram(std::string_view bytes, const std::string& file);

} // namespace tilescope
