#include "core/crossthread.h"

#include <QCoreApplication>

namespace tilescope::ui {

CallEvent::CallEvent(std::function<void()> fn) : QEvent(eventType()), m_fn(std::move(fn)) {}

CallEvent::~CallEvent() {
    tsanAcquire(this); // before m_fn (and what it captured) is destroyed
}

QEvent::Type CallEvent::eventType() {
    static const auto type = QEvent::Type(QEvent::registerEventType());
    return type;
}

bool CallEvent::deliver(QEvent* e) {
    tsanAcquire(e); // a no-op for events nobody released
    if (e->type() != eventType()) return false;
    static_cast<CallEvent*>(e)->m_fn();
    return true;
}

void postCall(QObject* target, std::function<void()> fn) {
    auto* e = new CallEvent(std::move(fn));
    // From here on the event belongs to Qt's queue; nothing on this thread touches it again.
    tsanRelease(e);
    QCoreApplication::postEvent(target, e);
}

bool CallReceiver::event(QEvent* e) {
    return CallEvent::deliver(e) || QObject::event(e);
}

} // namespace tilescope::ui
