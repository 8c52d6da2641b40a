// Times ONNX import (read + protobuf parse + shape inference + layer graph) of a model.
// Usage: bench_import [MODEL.onnx] [REPEATS]
// Without a model it generates ResNet-50 with full weights (~100 MB) in /tmp through
// scripts/make_samples.py --with-weights (needs /usr/bin/python3 with torch) and times that.
#include "model/onnx_import.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace tilescope;

int main(int argc, char** argv) {
    std::string path = argc > 1 ? argv[1] : "";
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    if (path.empty()) {
        path = (std::filesystem::temp_directory_path() / "tilescope_resnet50_full.onnx").string();
        if (!std::filesystem::exists(path)) {
            const std::string script =
                std::string(TILESCOPE_SAMPLES) + "/../scripts/make_samples.py";
            const std::string cmd =
                "/usr/bin/python3 '" + script + "' --with-weights '" + path + "' > /dev/null 2>&1";
            std::printf("generating %s ...\n", path.c_str());
            if (std::system(cmd.c_str()) != 0 || !std::filesystem::exists(path)) {
                std::fprintf(stderr, "could not generate %s (run: %s)\n", path.c_str(),
                             cmd.c_str());
                return 1;
            }
        }
    }
    const auto size = std::filesystem::file_size(path);
    std::vector<double> ms;
    Count macs = 0;
    size_t layers = 0;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = importOnnx(path);
        const auto t1 = std::chrono::steady_clock::now();
        if (!r) {
            std::fprintf(stderr, "%s\n", r.error().message.c_str());
            return 1;
        }
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        macs = r->totalMacsPerSample();
        layers = r->layers.size();
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%s: %.1f MB, %zu layers, %.3f GMAC/sample\n", path.c_str(), double(size) / 1e6,
                layers, double(macs) / 1e9);
    std::printf("import time over %d runs: min %.1f ms, median %.1f ms, max %.1f ms\n", repeats,
                ms.front(), ms[ms.size() / 2], ms.back());
    return 0;
}
