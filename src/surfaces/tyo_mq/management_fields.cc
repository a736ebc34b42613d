#include "surfaces/tyo_mq/management_fields.h"

namespace siomq::surfaces::management {

using nlohmann::json;

Error bad(std::string message) { return make_error(std::move(message), 400); }

Result<std::optional<std::string>> text(const json& body, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = body.find(k);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_string()) return bad(std::string(k) + " must be a string");
    return std::optional<std::string>(it->get<std::string>());
  }
  return std::optional<std::string>();
}

Result<std::optional<bool>> flag(const json& body, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = body.find(k);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_boolean()) return bad(std::string(k) + " must be a boolean");
    return std::optional<bool>(it->get<bool>());
  }
  return std::optional<bool>();
}

}  // namespace siomq::surfaces::management
