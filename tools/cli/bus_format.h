// The bus's structs (siomq/bus.h) as JSON documents for --json and as human lines: messages, stream
// configs and states, consumer infos and the server's stats.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "siomq/bus.h"

namespace siomq::cli {

class Output;

nlohmann::json to_json(const bus::Message& m);
nlohmann::json to_json(const bus::StreamConfig& c);
nlohmann::json to_json(const bus::StreamMeta& m);
nlohmann::json to_json(const bus::StreamState& s);
nlohmann::json to_json(const bus::StreamInfo& i);
nlohmann::json to_json(const bus::ConsumerConfig& c);
nlohmann::json to_json(const bus::ConsumerInfo& i);
nlohmann::json to_json(const bus::Stats& s);

// A message as nats prints one: "[#n] Received on "subject"" (with stream, seq and reply when set),
// its header lines, then its data.
void print_message(const Output& out, const bus::Message& m, int n);

// Human views of a stream's config and state, and of a consumer.
void print_stream(const Output& out, const bus::StreamInfo& info);
void print_consumer(const Output& out, const bus::ConsumerInfo& info);

}  // namespace siomq::cli
