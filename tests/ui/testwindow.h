// Shared by the GUI tests: a main window as a user sees it at 1280x800 (non-interactive:
// errors go to lastError(), not to message boxes; autosaves in `dir`), the same window with
// the sample a new user opens first, and the leaves of a tree, which the S-T rectangles'
// node ids are compared with.
#pragma once

#include "model/network.h"
#include "tree/ratree.h"
#include "widgets/mainwindow.h"
#include "widgets/stgraphview.h"

#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <set>

inline std::unique_ptr<tilescope::ui::MainWindow> openTestWindow(const QTemporaryDir& dir) {
    QStandardPaths::setTestModeEnabled(true);
    qputenv("TILESCOPE_RECOVERY_DIR", dir.path().toUtf8());
    auto w = std::make_unique<tilescope::ui::MainWindow>();
    w->setInteractive(false);
    w->resize(1280, 800);
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get())) return nullptr;
    return w;
}

// Waits until the S-T graph has laid out the current schedule (and a little more, for the
// views that follow it); false after 20 s.
inline bool waitForLayout(const tilescope::ui::MainWindow& w) {
    if (!QTest::qWaitFor([&] { return w.stGraph()->hasLayout(); }, 20000)) return false;
    QTest::qWait(50);
    return true;
}

// The window after the welcome page's one click: the resnet50 sample on the edge preset,
// laid out; null when it did not open.
inline std::unique_ptr<tilescope::ui::MainWindow> openSampleWindow(const QTemporaryDir& dir) {
    auto w = openTestWindow(dir);
    if (!w || !w->openSample(QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx"),
                             QStringLiteral("edge"), false))
        return nullptr;
    return waitForLayout(*w) ? std::move(w) : nullptr;
}

inline std::set<int> leavesOf(const tilescope::RATree& t, const tilescope::Network& net) {
    std::set<int> out;
    for (int l = 0; l < int(net.layers.size()); ++l)
        if (int leaf = t.leafOf(l); leaf >= 0) out.insert(leaf);
    return out;
}
