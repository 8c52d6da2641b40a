#include "util/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

namespace tilescope {

namespace {
// SI prefixes from atto to yotta; kUnit is the position of none.
const char* const kPrefixes[] = {"a", "f", "p", "n", "\xC2\xB5", "m", "", "k",
                                 "M", "G", "T", "P", "E",        "Z", "Y"};
constexpr int kUnit = 6;
constexpr int kTop = int(std::size(kPrefixes)) - 1 - kUnit; // prefixes above none
} // namespace

std::string formatEngineering(double value, std::string_view unit, int significant, bool sign) {
    if (!std::isfinite(value)) return "-";
    const std::string u(unit);
    if (value == 0) return "0" + (u.empty() ? std::string() : " " + u);
    significant = std::max(3, significant);
    const double mag = std::abs(value);
    int p = int(std::floor(std::log10(mag) / 3.0));
    p = std::clamp(p, -kUnit, kTop);
    double m = mag / std::pow(1000.0, p);
    // Rounding to `significant` digits may reach the next power of ten (9.9996 -> 10.00)
    // or 1000 (then the next prefix: 999.96 -> 1.000 k).
    auto digitsAfterPoint = [&](double x) {
        return std::max(0, significant - 1 - int(std::floor(std::log10(std::max(x, 1e-300)))));
    };
    auto roundTo = [](double x, int d) {
        const double scale = std::pow(10.0, d);
        return std::round(x * scale) / scale;
    };
    int d = digitsAfterPoint(m);
    if (roundTo(m, d) >= 1000.0 && p < kTop) {
        ++p;
        m = mag / std::pow(1000.0, p);
        d = digitsAfterPoint(m);
    }
    d = digitsAfterPoint(roundTo(m, d));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%.*f", value < 0 ? "-" : (sign ? "+" : ""), d, m);
    std::string s = buf;
    const std::string prefix = kPrefixes[p + kUnit];
    if (u.empty()) return prefix.empty() ? s : s + " " + prefix;
    return s + " " + prefix + u;
}

UnitScale engineeringScale(double maxValue, std::string_view unit) {
    UnitScale s;
    const double mag = std::abs(maxValue);
    int p = mag > 0 && std::isfinite(mag) ? int(std::floor(std::log10(mag) / 3.0)) : 0;
    p = std::clamp(p, -kUnit, kTop);
    s.factor = std::pow(1000.0, -p);
    s.unit = std::string(kPrefixes[p + kUnit]) + std::string(unit);
    return s;
}

UnitScale energyScale(PicoJoules maxValue) {
    UnitScale s = engineeringScale(maxValue * 1e-12, "J");
    s.factor *= 1e-12;
    return s;
}

std::string formatEnergy(PicoJoules e, bool sign) {
    return formatEngineering(e * 1e-12, "J", 4, sign);
}

std::string formatCycles(Cycles c, bool sign) {
    // "1.792 M cycles": the prefix stands alone, "Mcycles" reads badly.
    std::string s = formatEngineering(c, "", 4, sign);
    return s == "-" ? s : s + " cycles";
}

std::string formatDuration(Cycles c, double clockGHz, bool sign) {
    if (!(clockGHz > 0)) return "-";
    return formatEngineering(c / (clockGHz * 1e9), "s", 4, sign);
}

std::string formatTime(Cycles c, double clockGHz, bool sign) {
    return formatCycles(c, sign) + " (" + formatDuration(c, clockGHz, sign) + ")";
}

std::string formatBytes(Bytes b, bool sign) {
    std::string s = formatEngineering(b, "B", 4, sign);
    // Decimal kilobytes are written KB here, as the heatmap and the panels always did.
    const auto k = s.find(" kB");
    if (k != std::string::npos) s.replace(k, 3, " KB");
    return s;
}

} // namespace tilescope
