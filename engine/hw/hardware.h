// The hardware template: mesh of hw-tiles (MAC array, its in-tile storage levels, global
// buffer, router), NoC and DRAM bandwidths, DRAM port sides, clock and unit energies.
// docs/method.md §1 gives the defaults, docs/hardware-format.md each preset's figures.
#pragma once

#include "util/result.h"
#include "util/units.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace tilescope {

enum class TileArch { Nvdla, Cim };

struct SramEnergyPoint {
    Bytes bufferBytes; // buffer size this entry applies to (entries sorted ascending)
    double pjPerByte;  // access energy per byte
};

struct EnergyModel {
    double dramPjPerBit = 7.5;
    double nocPjPerBitHop = 0.7;
    double macPj = 0.018;              // per MAC operation
    double vectorPjPerOp = 0.01;       // vector unit / pooling / eltwise element operation
    std::vector<SramEnergyPoint> sram; // table by buffer size; see docs/hardware-format.md
    // The global buffer's own read and write energies per byte; 0 (both) takes the sram
    // table's figure for its size for either.
    double bufferReadPjPerByte = 0, bufferWritePjPerByte = 0;
    // Energy per byte for a buffer of this size: the first table entry whose size is at
    // least bufferBytes, else the last; linear in log(size) between entries.
    double sramPjPerByte(Bytes bufferBytes) const;
};

enum class MeshSide { West, East, North, South };

// The operands a storage level holds (bit set).
enum OperandBits : unsigned { HoldsInput = 1, HoldsWeight = 2, HoldsOutput = 4 };

// One storage level inside a MAC-array tile, between the global buffer and the MACs
// (docs/hardware-format.md "Storage inside the tile"; docs/cost-model.md §2c counts its
// accesses). Levels are listed from the MACs outwards: the first level holding an operand
// feeds the MACs, the later ones pass it on.
struct StorageLevel {
    std::string name;   // its key in the energy breakdown ("al1", "wl1", ...)
    Bytes bytes = 0;    // capacity of one instance
    int instances = 1;  // copies in a tile (one per PE, say)
    unsigned holds = 0; // OperandBits
    double readPjPerByte = 0, writePjPerByte = 0;
    // Of the level next to the MACs: how many MACs one element read from it feeds (inputs:
    // the output-channel lanes it is broadcast to; weights: the output positions it is held
    // for; outputs: the input channels reduced before one partial-sum write).
    int fanout = 1;
    bool operator==(const StorageLevel&) const = default;
};
constexpr int kMaxStorageLevels = 8;

// Compute-in-memory tiles (docs/hardware-format.md "Compute-in-memory tiles"): a tile holds
// `cores` cores of `crossbarsPerCore` crossbars of rows x cols cells, bitsPerCell bits each.
// A weight of dataBits bits takes ceil(dataBits / bitsPerCell) cells: adjacent cells of one
// crossbar's row (Cells), or one cell in each of that many crossbars side by side, each
// holding one bit slice, which together form one logical crossbar of rows x cols weights
// (Crossbars; crossbarsPerCore then counts logical crossbars).
enum class CimSlicing : char { Cells, Crossbars };
// How a tile's crossbar blocks are placed (docs/cost-model.md §8): one loop nest over all the
// tile's crossbars in order, the cores sharing it (Tile); or column block c (its output
// channels) on core c mod cores, each core running its own loop nest over its crossbars
// (OutputChannels).
enum class CimBinding : char { Tile, OutputChannels };
class CimRecordBook; // mapping/cim_records.h
struct CimParams {
    int cores = 4;
    int crossbarsPerCore = 9;
    int rows = 64, cols = 64;
    int bitsPerCell = 2;
    double writePjPerBit = 2.0;    // programming energy per stored bit
    Cycles writeCyclesPerRow = 50; // a core writes one crossbar row at a time
    double readPjPerOp = 0.005;    // one MAC in a crossbar, DAC/ADC share included
    Bytes psumBufferBytes = 8192;  // partial sums (int32) kept between crossbar passes
    Cycles mvmCycles = 8;          // one matrix-vector product of a crossbar (all input bits)
    bool doubleBufferedCrossbars = false; // half the crossbars compute while half are written
    CimSlicing slicing = CimSlicing::Cells;
    CimBinding binding = CimBinding::Tile;
    // The record file's schedules (`--cim-records`), shared by the copies of a template; not
    // part of the template.
    std::shared_ptr<CimRecordBook> records;

    int crossbars() const { return cores * crossbarsPerCore; }
    int cellsPerWeight(int dataBits) const { return (dataBits + bitsPerCell - 1) / bitsPerCell; }
    // Output channels one (logical) crossbar holds side by side.
    int weightColumns(int dataBits) const {
        return slicing == CimSlicing::Crossbars ? cols : cols / cellsPerWeight(dataBits);
    }
    // Physical crossbars of one logical crossbar: each is written row by row.
    int slices(int dataBits) const {
        return slicing == CimSlicing::Crossbars ? cellsPerWeight(dataBits) : 1;
    }
    // Peak MACs per cycle of a tile: every crossbar busy, one product per mvmCycles.
    int peakMacs(int dataBits) const {
        return int(double(crossbars()) * rows * weightColumns(dataBits) / mvmCycles);
    }
};

// A mesh of chiplets (docs/hardware-format.md "Chiplets"): the tile mesh (Hardware::meshX x
// meshY) cut into x x y chiplets of equal size; a mesh link between two chiplets carries
// linkBytesPerCycle (per direction) at pjPerBitHop, every other link the NoC's figures.
// One chiplet (the default) is a single-chip template.
struct ChipletLinks {
    int x = 1, y = 1;             // chiplets per row and per column
    double linkBytesPerCycle = 8; // an inter-chiplet link, per direction
    double pjPerBitHop = 2.0;     // energy per bit per inter-chiplet hop
    int count() const { return x * y; }
    bool operator==(const ChipletLinks&) const = default;
};

// The order a tile's LOAD engine brings a compute's operands in, which decides what its
// first compute stage waits for (docs/isa.md, "Load orders"): per compute, whichever operand
// is larger streams and the other comes first (Auto); the weights whole first and the input
// by rows (WeightsFirst: weight-stationary); the input whole first and the weights by output
// channel (InputsFirst: feature-map-stationary).
enum class LoadOrder { Auto, WeightsFirst, InputsFirst };
const char* toString(LoadOrder o); // "auto", "weights-first", "inputs-first"

struct Hardware {
    std::string name = "custom";
    int meshX = 4, meshY = 4;    // columns x rows
    int macsPerTile = 1024;      // int8 MACs per cycle (cim: CimParams::peakMacs)
    Bytes bufferBytes = 1 << 20; // global buffer per tile
    int vectorLanes = 64;        // vector unit ops per cycle
    // Whether the mapper may split a layer's reduction over tiles (LeafMapping::pc).
    bool channelSplit = false;
    TileArch arch = TileArch::Nvdla;
    LoadOrder loadOrder = LoadOrder::Auto;
    // Stage granularity (docs/isa.md, "Stage granularity"): an instruction of B bytes is cut
    // into ceil(B / stageBytes) stages, 1 to 64 (stageCount, engine/eval/transfers.h); 0 (the
    // key absent) cuts every instruction into 8.
    long long stageBytes = 0;
    double nocBytesPerCycle = 24;  // per link, per direction
    double dramBytesPerCycle = 16; // total over all ports
    std::vector<MeshSide> dramSides = {MeshSide::West, MeshSide::East};
    // Where a tile's DRAM bytes enter and leave the mesh (docs/hardware-format.md, "Tile
    // numbering and DRAM ports"): false, the port of its nearest DRAM side; true, memory
    // interleaved over every port (every edge tile of every DRAM side), each transfer split
    // evenly over all of them.
    bool dramInterleaved = false;
    // The DRAM model of docs/hardware-format.md: a read's data arrives this long after its
    // transfer; a tile keeps up to maxOutstandingLoads LOADs in flight to hide it; with
    // dramPortBytesPerCycle > 0 each side's controller is a bandwidth limit of its own.
    double dramLatencyCycles = 0;
    int maxOutstandingLoads = 4;
    double dramPortBytesPerCycle = 0; // per side; 0 = only the shared total
    // DRAM runs (docs/hardware-format.md "DRAM runs"; docs/cost-model.md §4b): a transfer is
    // cut into the contiguous runs its tensor's layout gives; each run moves whole bursts of
    // dramBurstBytes and holds its port dramRunOverheadCycles more. Both 0: every byte costs
    // the same whatever its layout (no run model). dramChannelBlock is the c of the blocked
    // NCHWc layout.
    int dramBurstBytes = 0;
    double dramRunOverheadCycles = 0;
    int dramChannelBlock = 16;
    double clockGHz = 1.0;
    int dataBits = 8;
    int stripe = 2; // columns per stripe of the snake tile numbering
    EnergyModel energy;
    CimParams cim;
    ChipletLinks chiplets;
    std::vector<StorageLevel> levels; // in-tile storage, MACs outwards (none: not modelled)

    int tiles() const { return meshX * meshY; }
    double peakTops() const { return 2.0 * macsPerTile * tiles() / 1024.0; }
};

// What a DRAM run costs (Hardware::dramBurstBytes and the rest; docs/cost-model.md §4b), with
// the bandwidth of one port's share of the total, which a run's overhead holds.
struct DramRunModel {
    int burstBytes = 0;
    double overheadCycles = 0;
    int channelBlock = 16;
    double portShare = 0; // dramBytesPerCycle / DRAM sides
    bool active() const { return burstBytes > 1 || overheadCycles > 0; }
};
DramRunModel dramRunModel(const Hardware& hw);

// Defaults of docs/method.md §1 for a mesh: DRAM 0.5 GB/s per TOPS -> bytes/cycle at 1 GHz.
Hardware defaultHardware(int meshX, int meshY, const std::string& name);
// The global buffer's read / write energy per byte (EnergyModel::bufferReadPjPerByte).
double bufferReadPj(const Hardware& hw);
double bufferWritePj(const Hardware& hw);
// "edge" 4x4, "cloud" 12x12 (both of NVDLA-style "polar" tiles), "eyeriss" 4x4 of
// Eyeriss-style tiles, "testchip" 2x2, "cim" 4x4 compute-in-memory, "chiplet" 8x8 as 2x2
// chiplets of 4x4, "wafer" 32x32 with DRAM on all four sides; false when unknown.
bool presetHardware(const std::string& name, Hardware& out);
std::vector<std::string> presetNames();

// Parse a hardware template (JSON text, or a value already parsed). `file` names the source
// in error messages. Unknown keys, non-positive sizes and negative bandwidths are errors
// naming the key.
Result<Hardware> parseHardware(const std::string& jsonText, const std::string& file);
Result<Hardware> parseHardwareValue(const nlohmann::json& j, const std::string& file);
// parseHardware(a json value, file) reads the value (never its conversion to a string),
// while a string literal still goes to the text overload.
template <class J, std::enable_if_t<std::is_same_v<J, nlohmann::json>, int> = 0>
Result<Hardware> parseHardware(const J& j, const std::string& file) {
    return parseHardwareValue(j, file);
}
// A file path, or a preset name when no such file exists.
Result<Hardware> loadHardware(const std::string& pathOrPreset);
// The template as a JSON value (every key, so parseHardware gives hw back); documents embed
// it as it is, files write hardwareToJson(hw).dump(2).
nlohmann::json hardwareToJson(const Hardware& hw);

} // namespace tilescope
