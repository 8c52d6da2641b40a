#include "util/json.h"

namespace tilescope {

using nlohmann::json;

std::variant<json, JsonSyntaxError> parseJsonText(const std::string& text) {
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        return JsonSyntaxError{e.byte, false, e.what()};
    } catch (const json::exception& e) { // out_of_range 406: a number too large for a double
        return JsonSyntaxError{0, true, e.what()};
    }
}

Result<json> parseJson(const std::string& text, const std::string& file) {
    auto parsed = parseJsonText(text);
    if (auto* j = std::get_if<json>(&parsed)) return std::move(*j);
    const auto& e = std::get<JsonSyntaxError>(parsed);
    if (e.numberOutOfRange) return makeError(file, "", "invalid JSON (a number out of range)");
    return makeError(file, "byte " + std::to_string(e.byte), "invalid JSON");
}

std::string jsonPlace(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
}

bool JsonReader::checkKeys(const json& obj, const std::string& where,
                           std::initializer_list<const char*> known) {
    if (!obj.is_object()) return fail(where, "expected an object");
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        bool ok = false;
        for (const char* k : known)
            ok = ok || it.key() == k;
        if (!ok) return fail(jsonPlace(where, it.key()), "unknown key");
    }
    return true;
}

} // namespace tilescope
