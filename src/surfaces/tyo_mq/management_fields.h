// Reading the fields of a management command's signed body: a wrong type is a 400 with the field's
// name, an absent or null field is nullopt. Pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>

#include "wire/result.h"

namespace siomq::surfaces::management {

// A 400 with `message`: the answer to a malformed command.
Error bad(std::string message);
// The string at `key` (or its aliases), nullopt when absent or null; an error when it is another type.
Result<std::optional<std::string>> text(const nlohmann::json& body, std::initializer_list<const char*> keys);
// The same for a boolean.
Result<std::optional<bool>> flag(const nlohmann::json& body, std::initializer_list<const char*> keys);

}  // namespace siomq::surfaces::management
