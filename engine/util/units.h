// Unit aliases shared by the whole engine: cycles, bytes and picojoules are plain numbers
// with names, so a signature says which one it wants. Also the one units policy for people
// (docs/gui.md "Units"): every view, the HTML report and the CLI tables format with these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tilescope {

using Cycles = double;     // clock cycles of the accelerator
using Bytes = double;      // bytes (8-bit data: one element is one byte)
using PicoJoules = double; // energy
using Count = std::int64_t;

// Engineering notation: the SI prefix is chosen both ways (1.2e-4 J -> "120.0 µJ",
// 2.3e7 -> "23.00 M"), mantissa in [1, 1000) with `significant` digits (3 or more).
// 0 is "0 <unit>"; NaN and infinities are "-". With `sign` a positive value gets a '+'
// (differences). Beyond the prefixes (p .. P) the mantissa grows.
std::string formatEngineering(double value, std::string_view unit, int significant = 4,
                              bool sign = false);
// Energy from pJ in joules with a prefix: "2.291 mJ", "845.0 pJ".
std::string formatEnergy(PicoJoules e, bool sign = false);
// Cycles: "1.792 M cycles", "512.0 cycles".
std::string formatCycles(Cycles c, bool sign = false);
// Wall time of `c` cycles at the template clock: "1.792 ms", "12.50 µs".
std::string formatDuration(Cycles c, double clockGHz, bool sign = false);
// Both, as every time figure is shown: "1.792 M cycles (1.792 ms)".
std::string formatTime(Cycles c, double clockGHz, bool sign = false);
// Decimal bytes: "1.234 MB" (k is written K as storage tools do).
std::string formatBytes(Bytes b, bool sign = false);

// For chart axes: the prefix under which `maxValue` (in `unit`) reads 1 .. 1000. A value v
// is plotted as v * factor and the axis labelled `unit` ("mJ").
struct UnitScale {
    double factor = 1;
    std::string unit;
};
UnitScale engineeringScale(double maxValue, std::string_view unit);
// Energy axes from pJ: factor converts pJ to the shown unit.
UnitScale energyScale(PicoJoules maxValue);

} // namespace tilescope
