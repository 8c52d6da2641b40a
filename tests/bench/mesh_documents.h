// The view benchmarks' schedules: ResNet-50 at batch 8 opened in a Document on the 12x12
// preset, the 32x32 wafer preset and the 64x64 wafer template of samples/hw, the meshes
// whose views the benchmarks time; as opened (the layer-sequential start) or as the layer
// pipeline (S-cut segments, each layer on its own tiles: many partly busy groups of tiles).
#pragma once

#include "core/document.h"
#include "search/strategy.h"

#include <QElapsedTimer>
#include <QString>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

namespace tilescope::ui {

struct MeshCase {
    const char* label;
    QString hardware; // a preset name or a template file
};

inline std::vector<MeshCase> meshCases() {
    return {{"12x12 (cloud)", QStringLiteral("cloud")},
            {"32x32 (wafer)", QStringLiteral("wafer")},
            {"64x64 (samples/hw/wafer-64x64.json)",
             QStringLiteral(TILESCOPE_SAMPLES "/hw/wafer-64x64.json")}};
}

// A document with ResNet-50 batch 8 on the case's hardware; null (after a message) on error.
// `pipeline`: with the layer-pipeline tree (built within a few seconds) adopted.
inline std::unique_ptr<Document> openResNet50(const MeshCase& c, bool pipeline) {
    auto doc = std::make_unique<Document>();
    QElapsedTimer t;
    t.start();
    auto err = doc->openHardware(c.hardware);
    if (!err) err = doc->setBatch(8);
    if (!err) err = doc->openModel(QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
    if (err) {
        std::fprintf(stderr, "%s: %s\n", c.label, err->message.c_str());
        return nullptr;
    }
    if (pipeline) {
        EvalContext ctx(*doc->network(), *doc->hardware());
        EvalOptions opt;
        opt.objective = doc->objective();
        Deadline by;
        by.at = Deadline::Clock::now() + std::chrono::seconds(5);
        auto tree = layerPipelineStart(ctx, doc->batch(), opt, by);
        if (tree) err = doc->adoptTree(*tree, QStringLiteral("layer pipeline"));
        if (!tree || err) {
            std::fprintf(stderr, "%s: no layer pipeline\n", c.label);
            return nullptr;
        }
    }
    std::printf("\n%s: ResNet-50 batch 8, %s tree evaluated in %.1f s (%s)\n", c.label,
                pipeline ? "layer-pipeline" : "layer-sequential", double(t.elapsed()) / 1000,
                doc->evaluation() && doc->evaluation()->valid ? "valid" : "invalid");
    return doc;
}

} // namespace tilescope::ui
