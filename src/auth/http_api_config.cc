#include "auth/http_api_config.h"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace siomq::auth {

HttpApiConfig parse_http_api(const nlohmann::json& document) {
  HttpApiConfig c;
  const char* name = "http_api";
  auto it = document.find(name);
  if (it == document.end() || it->is_null()) {
    name = "httpApi";
    it = document.find(name);
  }
  if (it == document.end() || it->is_null()) return c;
  if (!it->is_object()) throw std::runtime_error(std::string(name) + " must be an object");
  struct Key {
    const char* snake;
    const char* camel;
    bool* out;
  };
  const Key keys[] = {{"enabled", "enabled", &c.enabled},
                      {"health", "health", &c.health},
                      {"metrics", "metrics", &c.metrics},
                      {"stats", "stats", &c.stats},
                      {"metrics_auth", "metricsAuth", &c.metrics_auth}};
  for (const auto& [key, value] : it->items()) {
    const Key* found = nullptr;
    for (const Key& k : keys) {
      if (key == k.snake || key == k.camel) found = &k;
    }
    if (!found) throw std::runtime_error(std::string(name) + "." + key + " is not a known key (enabled, health, metrics, stats, metrics_auth)");
    if (value.is_null()) continue;
    if (!value.is_boolean()) throw std::runtime_error(std::string(name) + "." + key + " must be a boolean");
    *found->out = value.get<bool>();
  }
  return c;
}

}  // namespace siomq::auth
