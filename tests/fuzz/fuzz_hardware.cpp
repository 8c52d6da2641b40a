// libFuzzer entry point; the function under test is tilescope::fuzz::hardware (fuzz_targets.h).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
    tilescope::fuzz::hardware(std::string(reinterpret_cast<const char*>(data), size));
    return 0;
}
