// The commands of tilescope-cli (CLI.md). Each takes parsed arguments and returns the
// process exit status: 0 success, 1 user error (message already printed), 2 bad arguments.
#pragma once

#include "model/onnx_import.h"

#include <map>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <vector>

namespace tilescope::cli {

struct Args {
    std::string command;
    std::vector<std::string> positional;
    std::multimap<std::string, std::string> options; // "--hw" -> "edge"; flags map to ""

    bool has(const std::string& k) const { return options.count(k) > 0; }
    std::string get(const std::string& k, const std::string& def = "") const {
        auto it = options.find(k);
        return it == options.end() ? def : it->second;
    }
    std::vector<std::string> all(const std::string& k) const;
};

// Thrown for bad arguments: main prints the message with usage and exits 2.
struct UsageError {
    std::string message;
};

// --dim NAME=VALUE (repeatable) and --fallback: how a model file is imported.
ImportOptions importOptions(const Args& a);
// The same dimensions from a result or session document's "dims" object (none: {}).
ImportOptions importOptionsOf(const nlohmann::json& doc, const std::string& path);

int runInspect(const Args& a);
int runEvaluate(const Args& a);
int runAnneal(const Args& a);
int runCompare(const Args& a);
int runGenerate(const Args& a);
int runMapping(const Args& a);
int runExportInstructions(const Args& a);
int runSimulate(const Args& a);
int runSweep(const Args& a);
int runSweepMerge(const Args& a);

// Ctrl-C stops a search (or a sweep's running points) at its next check and keeps what was
// found; the handler only sets a lock-free flag (the one thing a signal handler may do).
struct Interruptible {
    std::stop_source source;
    Interruptible();
    ~Interruptible();
    bool poll(); // requests the stop once Ctrl-C was pressed; true when stopping
};

// Prints "tilescope-cli: <message>" to stderr and returns 1.
int userError(const std::string& message);

} // namespace tilescope::cli
