// The bundled sample models, loaded once per test process (each test may read them, none
// changes them), and the built-in hardware presets; a missing one ends the test.
#pragma once

#include "hw/hardware.h"
#include "model/model_loader.h"

#include <QtGlobal>
#include <map>
#include <memory>
#include <string>

namespace tilescope::test {

inline const Network& sample(const std::string& name) {
    static std::map<std::string, std::unique_ptr<Network>> cache;
    auto& slot = cache[name];
    if (!slot) {
        auto r = loadModel(std::string(TILESCOPE_SAMPLES) + "/models/" + name + ".onnx");
        if (!r) qFatal("cannot load sample %s: %s", name.c_str(), r.error().message.c_str());
        slot = std::make_unique<Network>(std::move(r).value());
    }
    return *slot;
}

inline Hardware preset(const char* name) {
    Hardware hw;
    if (!presetHardware(name, hw)) qFatal("no preset %s", name);
    return hw;
}

} // namespace tilescope::test
