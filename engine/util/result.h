// Result<T>: a value or an Error with a message naming the file, the place and the reason.
// The engine never throws across its API and never prints; callers decide what to show.
// The one error type of the engine and ui/core: a function with a value returns Result<T>;
// one without returns std::optional<Error> (nullopt = done). An infeasible schedule is not
// an error but a result: Evaluation::valid with its reason (eval/evaluation.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tilescope {

struct Error {
    std::string message; // one line: "<file>: <place>: <reason>"
};

template <class T> class Result {
  public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Error e) : m_v(std::move(e)) {}

    bool ok() const { return std::holds_alternative<T>(m_v); }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<T>(m_v); }
    T& value() & { return std::get<T>(m_v); }
    T&& value() && { return std::get<T>(std::move(m_v)); }
    const T& operator*() const& { return value(); }
    T& operator*() & { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }
    const Error& error() const { return std::get<Error>(m_v); }

  private:
    std::variant<T, Error> m_v;
};

inline Error makeError(const std::string& file, const std::string& place,
                       const std::string& reason) {
    std::string m = file;
    if (!place.empty()) m += (m.empty() ? "" : ": ") + place;
    if (!reason.empty()) m += (m.empty() ? "" : ": ") + reason;
    return Error{m};
}

} // namespace tilescope
