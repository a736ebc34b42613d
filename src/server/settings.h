// The server's settings: the tyo-mq JSON settings file (unknown keys are logged and ignored) plus the
// command line. Parsing is strict about types: a wrong type is a start-up error, not a silent default.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <memory>
#include <string>

#include "net/transport_options.h"

namespace siomq::server {

struct Settings {
  net::TransportOptions transport;
  bool diagnostics = false;
  std::shared_ptr<const nlohmann::json> document;  // the whole file, for the surfaces that read it
};

// Reads and validates a settings file; throws std::runtime_error with the reason on failure.
Settings load_settings_file(const std::string& path);
// Builds settings from a parsed document (the file's contents); throws on invalid values.
Settings settings_from_json(const nlohmann::json& doc);
// Applies environment overrides (TYO_MQ_MAX_HTTP_BUFFER_SIZE).
void apply_environment(Settings& settings);

}  // namespace siomq::server
