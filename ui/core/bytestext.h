// Byte counts for people: decimal units (B, KB, MB, GB, TB) as the charts and panels show
// them. decimals < 0 picks 2 below 10 and 1 above, for tight labels.
#pragma once

#include <QString>

namespace tilescope::ui {

inline QString bytesText(double b, int decimals = 2) {
    static const char* u[] = {"B", "KB", "MB", "GB", "TB"};
    int i = 0;
    while (b >= 1000 && i < 4) {
        b /= 1000;
        ++i;
    }
    const int d = decimals >= 0 ? decimals : (b < 10 ? 2 : 1);
    return QStringLiteral("%1 %2").arg(b, 0, 'f', d).arg(QLatin1String(u[i]));
}

} // namespace tilescope::ui
