// Calls handed to another thread's event loop in a way ThreadSanitizer can follow. Debian's
// Qt is not built with TSan, so the hand-off inside its event queue (a futex-based QMutex)
// is invisible: anything QMetaObject::invokeMethod or a queued signal allocates on one
// thread and our code reads on the other looks like a race. postCall() allocates the event
// itself, fully constructs it, then releases it (__tsan_release) before posting; the
// receiver acquires it (CallEvent::deliver) before reading anything, so TSan sees the
// happens-before edge Qt provides. Without -fsanitize=thread the annotations are no-ops.
#pragma once

#include <QEvent>
#include <QObject>
#include <functional>

#if defined(__SANITIZE_THREAD__) // gcc
#define TILESCOPE_TSAN 1
#elif defined(__has_feature) // clang
#if __has_feature(thread_sanitizer)
#define TILESCOPE_TSAN 1
#endif
#endif

#ifdef TILESCOPE_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace tilescope::ui {

// Everything this thread wrote before is visible to a thread that later acquires addr.
inline void tsanRelease([[maybe_unused]] void* addr) {
#ifdef TILESCOPE_TSAN
    __tsan_release(addr);
#endif
}
inline void tsanAcquire([[maybe_unused]] void* addr) {
#ifdef TILESCOPE_TSAN
    __tsan_acquire(addr);
#endif
}

class CallEvent final : public QEvent {
  public:
    explicit CallEvent(std::function<void()> fn);
    Q_DISABLE_COPY_MOVE(CallEvent)
    // Undelivered events (receiver destroyed first) are deleted on another thread too.
    ~CallEvent() override;
    static QEvent::Type eventType();
    // For a receiver's event(): runs e if it is a CallEvent (true), else leaves it (false).
    // Acquires e first, so every event reaching it from another thread must be a CallEvent
    // (Qt's own events from other threads would be read unsynchronised, as before).
    static bool deliver(QEvent* e);

  private:
    std::function<void()> m_fn;
};

// Runs fn on target's thread, inside target->event(), which must start with
// CallEvent::deliver() (SearchWorker, CallReceiver). fn may also run on this thread if the
// target lives here; it never runs if target is destroyed first.
void postCall(QObject* target, std::function<void()> fn);

// A plain receiver for postCall() on the thread that creates it.
class CallReceiver : public QObject {
    Q_OBJECT
  public:
    using QObject::QObject;

  protected:
    bool event(QEvent* e) override;
};

} // namespace tilescope::ui
