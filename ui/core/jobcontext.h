// An EvalContext for the thread-pool jobs of one owner (ProgramRunner, LiveBestPreview):
// the document's own belongs to the GUI thread. It is kept across jobs for its memo caches
// and rebuilt when the network or the hardware change; a job copies the three pointers, so
// a model change during the job cannot pull them away. One job at a time may use it.
#pragma once

#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "model/network.h"

#include <memory>

namespace tilescope::ui {

struct JobContext {
    std::shared_ptr<EvalContext> ctx;
    std::shared_ptr<const Network> net;
    std::shared_ptr<const Hardware> hw;

    void follow(std::shared_ptr<const Network> n, std::shared_ptr<const Hardware> h) {
        if (ctx && n == net && h == hw) return;
        net = std::move(n);
        hw = std::move(h);
        ctx = std::make_shared<EvalContext>(*net, *hw);
    }
};

} // namespace tilescope::ui
