// A session file (JSON, docs/gui.md): model path + sha256, hardware template, batch,
// objective, tree text, pinned paths, search settings, seed and the last results. Loading
// verifies the model's hash so a session never silently pairs a tree with another model.
#pragma once

#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "search/search.h"
#include "util/result.h"

#include <QString>
#include <QStringList>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tilescope::ui {

class Session {
  public:
    QString modelPath; // absolute
    QString modelSha256;
    nlohmann::json hardware; // the template as hardwareToJson writes it
    QString hardwareSource;  // preset name or file the hardware came from (informative)
    int batch = 1;
    Objective objective;
    // The DRAM layout choice ("layouts", "layout_pins"; written only when not the default).
    LayoutChoice layouts;
    std::string treeText;
    QStringList pinned;                       // node paths
    std::map<std::string, std::int64_t> dims; // the model's free dimensions' sizes
    nlohmann::json keptOnChip;                // what it keeps on chip (keptOnChipJson), or null
    SearchConfig search;                      // seed, beta, t0, alpha, mode, chains are saved
    nlohmann::json results;                   // last evaluation / search / compare results (object)

    std::string toJson(const QString& sessionPath) const;
    static Result<Session> fromJson(const std::string& text, const QString& sessionPath);
    // Atomic write; the error names the file and the reason.
    std::optional<Error> save(const QString& path) const;
    // Parses and checks the model: missing (also tried next to the session, by its path
    // relative to the session's folder) or a different sha256 is an error.
    static Result<Session> load(const QString& path);

    // What a loaded session schedules: the model read, the hardware parsed, the tree text
    // parsed against the model and its pins set; the error names the file and the part.
    struct Inputs {
        std::shared_ptr<const Network> net;
        Hardware hw;
        RATree tree;
    };
    Result<Inputs> resolve(const QString& path) const;
};

} // namespace tilescope::ui
