// std::string (the engine's text: names, paths, messages) as a QString for the views.
#pragma once

#include <QString>
#include <string>

namespace tilescope::ui {

inline QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace tilescope::ui
