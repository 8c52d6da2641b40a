// The parts of anneal's command line that generate shares (app/cli_search.cpp): the search
// options, the progress line, the result context and the model + hardware inputs.
#pragma once

#include "cli_commands.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "report/result_json.h"
#include "search/search.h"
#include "tree/ratree.h"

#include <memory>
#include <optional>
#include <string>

namespace tilescope::cli {

// An integer option in [min, max]; a UsageError otherwise.
long long parseInteger(const std::string& opt, const std::string& v, long long min, long long max);
// "n,m": the exponents of E^n x D^m, non-negative and not both zero.
Objective parseObjective(const Args& a);
std::optional<int> batchArg(const Args& a);
// --stage-bytes N (docs/cli.md): the template's tile.stage_bytes for this run (evaluate,
// anneal, compare, export-instructions); nothing for 0 or absent (the template's own).
std::optional<long long> stageBytesArg(const Args& a);

// --cim-records FILE (docs/cli.md): the compute-in-memory record book the mapper reads and
// adds to. The file is written again (atomically) when the command ends, if it learned a
// workload; a line on stderr says what was reused and added.
struct CimRecordsFile {
    std::shared_ptr<CimRecordBook> book;
    std::string path;
    ~CimRecordsFile();
};
// Attaches the book to hw (a user error when hw has no compute-in-memory tiles or the file
// is not a record file): nothing without the option.
std::optional<Error> attachCimRecords(const Args& a, Hardware& hw,
                                      std::shared_ptr<CimRecordsFile>& out);

struct Inputs {
    std::string modelPath, modelSha, hwName;
    Network net;
    Hardware hw;
    std::shared_ptr<CimRecordsFile> cimRecords;
};

// Reads in.modelPath (with `opts`) and in.hwName into `in`; false with `status` set (a user
// error naming the file) when either does not load.
bool loadModelAndHardware(Inputs& in, const ImportOptions& opts, int& status);
ResultContext resultContext(const Inputs& in, int batch);
// Writes a file atomically: 0, or the user error's status.
int writeOut(const std::string& path, const std::string& contents);
std::string objectiveName(const Objective& o); // "E^1 x D^2"

// Progress on stderr: a one-line bar redrawn in place on a terminal, a plain line per
// second otherwise (logs, CI), nothing with --quiet.
class ProgressPrinter {
  public:
    ProgressPrinter(std::string label, bool quiet);

    void operator()(const Progress& p);

  private:
    std::string m_label;
    bool m_quiet, m_tty;
    double m_lastLine = -1e9;
    std::string m_phase;
};

struct SearchOptions {
    SearchConfig cfg;
    std::optional<RATree> init;
    std::string initPath;
};

// Options shared by anneal, compare and generate: objective, seed, budget, t0, alpha, mode,
// chains, threads, warm-up, portfolio, min-util, pins, batch, initial tree. `in` gives the
// default objective and the layer count a --beta budget scales with; `status` is set on a
// user error (an --init file that does not load).
SearchOptions searchOptions(const Args& a, const Inputs& in, int& status);
// --layouts auto|nchw|nhwc|chwn|nchwc and --pin-layout TENSOR=LAYOUT (docs/cli.md); throws
// UsageError.
LayoutChoice layoutChoiceArg(const Args& a);

} // namespace tilescope::cli
