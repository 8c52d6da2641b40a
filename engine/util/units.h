// Unit aliases shared by the whole engine: cycles, bytes and picojoules are plain numbers
// with names, so a signature says which one it wants.
#pragma once

#include <cstdint>

namespace tilescope {

using Cycles = double;     // clock cycles of the accelerator
using Bytes = double;      // bytes (8-bit data: one element is one byte)
using PicoJoules = double; // energy
using Count = std::int64_t;

} // namespace tilescope
