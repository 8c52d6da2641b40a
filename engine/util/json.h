// The one JSON entry point of every parser (hardware, network, tree, session, program):
// text to a value without exceptions, with a syntax error or an unrepresentable number
// reported as an Error naming the file and the byte, and checked reads of object members
// that name the member's place in the document.
#pragma once

#include "util/result.h"

#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <variant>

namespace tilescope {

// Why text is not JSON: the byte where the parser stopped (1-based), or a number too
// large for a double (nlohmann's out_of_range 406), which has no byte.
struct JsonSyntaxError {
    std::size_t byte = 0;
    bool numberOutOfRange = false;
    std::string detail; // the parser's own words
};

// Parses without throwing; the caller words the error (see parseJson for the usual words).
std::variant<nlohmann::json, JsonSyntaxError> parseJsonText(const std::string& text);

// "<file>: byte <n>: invalid JSON" or "<file>: invalid JSON (a number out of range)".
Result<nlohmann::json> parseJson(const std::string& text, const std::string& file);

// "where.key" ("key" at the top level): how errors name a member.
std::string jsonPlace(const std::string& where, const std::string& key);

// Checked reads of the members of one document: each method returns false on the first
// problem and leaves it in `error` as "<place>: <reason>", the place written like
// "dram.bytes_per_cycle"; the caller adds the file (makeError(file, "", error)).
struct JsonReader {
    std::string error;

    // obj is an object and every key of it is known: a typo in a hand-written document
    // must not silently fall back to a default.
    bool checkKeys(const nlohmann::json& obj, const std::string& where,
                   std::initializer_list<const char*> known);

    // obj[key], when present, into out: a finite number, >= 0, > 0 when positive (unless
    // allowZero), whole when T is integral. Absent: out keeps its value.
    template <class T>
    bool num(const nlohmann::json& obj, const std::string& where, const char* key, T& out,
             bool positive, bool allowZero = false) {
        if (!obj.contains(key)) return true;
        const nlohmann::json& v = obj[key];
        const std::string place = jsonPlace(where, key);
        if (!v.is_number()) return fail(place, "expected a number");
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < 0 || (positive && d == 0 && !allowZero))
            return fail(place, std::string("must be ") +
                                   (positive && !allowZero ? "positive" : "non-negative") +
                                   " (got " + v.dump() + ")");
        if constexpr (std::is_integral_v<T>) {
            if (d != std::floor(d) || d > 1e9)
                return fail(place, "expected a whole number (got " + v.dump() + ")");
        }
        out = static_cast<T>(d);
        return true;
    }

    bool fail(const std::string& place, const std::string& reason) {
        error = place + ": " + reason;
        return false;
    }
};

} // namespace tilescope
