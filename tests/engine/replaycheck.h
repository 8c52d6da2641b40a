// Shared by the model-agreement tests: a generated program validates, replays without a
// deadlock (no timeline) and moves exactly the schedule's DRAM bytes. After the call,
// `if (QTest::currentTestFailed()) return;` in the caller.
#pragma once

#include "codegen/codegen.h"
#include "sim/simulator.h"

#include <QtTest>

namespace tilescope::test {

inline void replayChecked(const CodegenResult& r, const Hardware& h, SimResult& out) {
    QVERIFY(validateProgram(r.program, h, "generated") == std::nullopt);
    SimOptions opt;
    opt.recordTimeline = false;
    out = simulate(r.program, h, opt);
    QVERIFY(out.deadlockFree);
    QCOMPARE(double(r.programDramBytes), r.layout.evaluation.dramBytes);
}

} // namespace tilescope::test
