#include "core/session.h"

#include "model/model_loader.h"
#include "tree/ratree.h"
#include "util/fileio.h"
#include "util/json.h"

#include <QDir>
#include <QFileInfo>

namespace tilescope::ui {

using nlohmann::json;

std::string Session::toJson(const QString& sessionPath) const {
    const QDir dir = QFileInfo(sessionPath).absoluteDir();
    json j;
    j["format"] = "tilescope-session";
    j["version"] = 1;
    j["model"] = {{"path", modelPath.toStdString()},
                  {"relative_path", dir.relativeFilePath(modelPath).toStdString()},
                  {"sha256", modelSha256.toStdString()}};
    if (!dims.empty()) j["model"]["dims"] = dims;
    if (!keptOnChip.is_null()) j["model"]["kept_on_chip"] = keptOnChip;
    j["hardware"] = hardware;
    j["hardware_source"] = hardwareSource.toStdString();
    j["batch"] = batch;
    j["objective"] = {{"n", objective.n}, {"m", objective.m}};
    // Only when not the default: a session of a template without a run model (or with the
    // plan left alone) stays byte for byte what it was.
    if (!layouts.planned) j["layouts"] = layoutChoiceName(layouts);
    if (!layouts.pins.empty()) j["layout_pins"] = layoutPinsJson(layouts);
    j["tree"] = treeText;
    json pins = json::array();
    for (const QString& p : pinned)
        pins.push_back(p.toStdString());
    j["pinned"] = pins;
    j["search"] = {{"seed", search.seed},       {"beta", search.beta},
                   {"seconds", search.seconds}, {"t0", search.t0},
                   {"alpha", search.alpha},     {"mode", toString(search.mode)},
                   {"chains", search.chains}};
    j["results"] = results.is_null() ? json::object() : results;
    return j.dump(2) + "\n";
}

Result<Session> Session::fromJson(const std::string& text, const QString& sessionPath) {
    const std::string file = sessionPath.toStdString();
    auto parsed = parseJson(text, file);
    if (!parsed) return parsed.error();
    const json& j = *parsed;
    if (!j.is_object() || j.value("format", "") != "tilescope-session")
        return makeError(file, "",
                         "not a Tilescope session (\"format\": \"tilescope-session\" missing)");
    Session s;
    try {
        const json& m = j.at("model");
        s.modelPath = QString::fromStdString(m.at("path").get<std::string>());
        s.modelSha256 = QString::fromStdString(m.at("sha256").get<std::string>());
        // Moved folders: a session next to its model still finds it.
        if (!QFileInfo::exists(s.modelPath) && m.contains("relative_path")) {
            const QString rel = QFileInfo(sessionPath)
                                    .absoluteDir()
                                    .absoluteFilePath(QString::fromStdString(
                                        m["relative_path"].get<std::string>()));
            if (QFileInfo::exists(rel)) s.modelPath = QDir::cleanPath(rel);
        }
        if (m.contains("dims")) {
            auto dims = dimsFromJson(m["dims"], file + ": model");
            if (!dims) return dims.error();
            s.dims = std::move(dims).value();
        }
        if (m.contains("kept_on_chip")) {
            ImportOptions checked;
            if (auto e = keptOnChipFromJson(m["kept_on_chip"], file + ": model", checked))
                return *e;
            s.keptOnChip = m["kept_on_chip"];
        }
        s.hardware = j.at("hardware");
        s.hardwareSource = QString::fromStdString(j.value("hardware_source", ""));
        s.batch = j.at("batch").get<int>();
        s.objective.n = j.at("objective").at("n").get<double>();
        s.objective.m = j.at("objective").at("m").get<double>();
        s.treeText = j.at("tree").get<std::string>();
        if (auto e = readLayoutChoice(j, file, "", "layouts", "layout_pins", s.layouts)) return *e;
        for (const auto& p : j.value("pinned", json::array()))
            s.pinned << QString::fromStdString(p.get<std::string>());
        if (j.contains("search")) {
            const json& c = j["search"];
            s.search.seed = c.value("seed", std::uint64_t(1));
            s.search.beta = c.value("beta", 100.0);
            // Sessions from before time budgets ran on beta: 0 keeps it that way.
            s.search.seconds = c.value("seconds", 0.0);
            s.search.t0 = c.value("t0", 0.07);
            s.search.alpha = c.value("alpha", 8.0);
            s.search.chains = c.value("chains", 1);
            if (!parseSearchMode(c.value("mode", "set"), s.search.mode))
                return makeError(file, "search.mode", "unknown mode '" + c.value("mode", "") + "'");
        }
        s.results = j.value("results", json::object());
    } catch (const json::exception& e) {
        return makeError(file, "", std::string("missing or mistyped field: ") + e.what());
    }
    if (s.batch < 1) return makeError(file, "batch", "must be at least 1");
    return s;
}

std::optional<Error> Session::save(const QString& path) const {
    return writeFileAtomic(path.toStdString(), toJson(path));
}

Result<Session> Session::load(const QString& path) {
    auto text = readFile(path.toStdString());
    if (!text) return text.error();
    auto s = fromJson(*text, path);
    if (!s) return s;
    const std::string file = path.toStdString();
    if (!QFileInfo::exists(s->modelPath))
        return makeError(file, "model", "model file " + s->modelPath.toStdString() + " is missing");
    auto sha = sha256File(s->modelPath.toStdString());
    if (!sha) return makeError(file, "model", sha.error().message);
    if (QString::fromStdString(*sha) != s->modelSha256)
        return makeError(file, "model",
                         "sha256 mismatch: " + s->modelPath.toStdString() + " has " + *sha +
                             ", the session was saved with " + s->modelSha256.toStdString() +
                             " (the model changed since)");
    return s;
}

Result<Session::Inputs> Session::resolve(const QString& path) const {
    ImportOptions options;
    options.dims = dims;
    if (auto e = keptOnChipFromJson(keptOnChip, path.toStdString() + ": model", options)) return *e;
    auto net = loadModel(modelPath.toStdString(), options);
    if (!net) return net.error();
    auto hw = parseHardware(hardware, path.toStdString() + ": hardware");
    if (!hw) return hw.error();
    auto tree = parseTreeText(treeText, *net, path.toStdString() + ": tree");
    if (!tree) return tree.error();
    RATree t = std::move(tree).value();
    for (const QString& p : pinned) {
        const int id = t.nodeAtPath(p.toStdString());
        if (id < 0) return Error{path.toStdString() + ": pinned: no node at " + p.toStdString()};
        auto r = edit::setPinned(t, id, true);
        if (!r)
            return Error{path.toStdString() + ": pinned " + p.toStdString() + ": " +
                         r.error().message};
        t = std::move(r).value();
    }
    return Inputs{std::make_shared<const Network>(std::move(net).value()), std::move(hw).value(),
                  std::move(t)};
}

} // namespace tilescope::ui
