// Feature maps in DRAM and the contiguous runs a transfer of a box of them makes
// (docs/cost-model.md §4b). A burst-oriented DRAM serves long runs at full bandwidth and
// short strided ones at a fraction: each run moves whole bursts and holds its port a fixed
// overhead more (Hardware::dramBurstBytes, dramRunOverheadCycles). The evaluator charges
// these runs, the instruction generator writes them into each LOAD/STORE descriptor and the
// simulator replays them, all from the functions here.
#pragma once

#include "hw/hardware.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tilescope {

// How a feature map [N, C, H, W] lies in DRAM, outermost axis first: NCHW, NHWC, CHWN, or
// NCHWc (channels in blocks of Hardware::dramChannelBlock, the block innermost).
enum class DramLayout : std::uint8_t { Nchw, Nhwc, Chwn, Nchwc };
inline constexpr int kLayoutCount = 4;
inline constexpr std::array<DramLayout, kLayoutCount> kLayouts{DramLayout::Nchw, DramLayout::Nhwc,
                                                               DramLayout::Chwn, DramLayout::Nchwc};

const char* layoutName(DramLayout l); // "nchw", "nhwc", "chwn", "nchwc"
std::optional<DramLayout> layoutFromName(std::string_view name);

// The runs of one transfer: how many, the bytes of its first run, and the bytes the DRAM
// moves for it (each run rounded up to whole bursts; runs start on a burst boundary).
struct DramRuns {
    std::uint64_t base = 0; // element offset of the box's first element in the tensor
    std::uint64_t runs = 0;
    std::uint64_t runBytes = 0;
    std::uint64_t burstBytes = 0;
};

// The runs of the box [lo, hi) of a feature map of shape [N, C, H, W] (elements of
// dataBits) in layout l, bursts of burstBytes (0 or 1: no rounding).
DramRuns dramRuns(DramLayout l, const std::array<int, 4>& shape, const std::array<int, 4>& lo,
                  const std::array<int, 4>& hi, int dataBits, int channelBlock, int burstBytes);
DramRuns dramRuns(const DramRunModel& m, DramLayout l, const std::array<int, 4>& shape,
                  const std::array<int, 4>& lo, const std::array<int, 4>& hi, int dataBits);
// A transfer that is one run of `bytes` (weights, laid out offline in their load order).
DramRuns oneRun(std::uint64_t bytes, int burstBytes);

// What the runs of a transfer of `bytes` cost the DRAM beyond the bytes themselves, in
// bytes at the total DRAM bandwidth: the bursts' padding, and each run's overhead holding
// its port (a port's share of the total bandwidth, dramBytesPerCycle / ports, for that long).
double runOverheadBytes(const DramRunModel& m, const DramRuns& r, double bytes);

} // namespace tilescope
