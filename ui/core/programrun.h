// One generated-and-simulated program for one revision of the document: what the
// Instructions panel lists, the S-T graph's simulated overlay draws and "Export for test
// chip" writes. Built off the GUI thread (build() is a pure function of its inputs) and
// shared read-only afterwards.
#pragma once

#include "codegen/codegen.h"
#include "sim/simulator.h"

#include <QString>
#include <memory>

namespace tilescope::ui {

class ProgramRun {
  public:
    quint64 revision = 0; // the document revision the program was generated from
    QString error;        // one line; empty when the program was generated and replayed
    std::shared_ptr<const CodegenResult> codegen;
    SimResult fine;            // stage-granular dependencies, with the timeline
    SimResult coarse;          // whole-instruction dependencies (no timeline): the speed-up's base
    double evaluatorDelay = 0; // the schedule's own figures, from the evaluation codegen ran
    double scheduleDramBytes = 0;
    double dramBytesPerCycle = 0; // the template's DRAM bandwidth the program ran at

    bool ok() const { return error.isEmpty() && codegen; }
    // fine vs coarse: how much the stage-granular dependencies buy (>= 1 normally)
    double speedUp() const { return fine.delay > 0 ? coarse.delay / fine.delay : 1.0; }

    // Generates, validates and replays. ctx must not be used by another thread meanwhile
    // (its memo caches are not synchronised).
    static std::shared_ptr<const ProgramRun> build(EvalContext& ctx, const RATree& tree, int batch,
                                                   const EvalOptions& eo, quint64 revision);
};

} // namespace tilescope::ui
