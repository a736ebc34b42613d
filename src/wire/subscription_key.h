// The subscription keys of tyo-mq (protocol §4.1): a SUBSCRIBE is stored, and a PRODUCE routed, by the
// key lower(producer) "-" lower(event); a subscription to every event of a producer (event "TM-ALL") by
// lower(producer) "-TM-ALL"; producer "TYO-MQ-ALL" subscribes to every producer. The key also names the
// delivery event, CONSUME-<key>. Pure and header-only, so that the broker routes by the same rule a client
// (the load generator) listens by, without linking the broker.
#pragma once

#include <string>
#include <string_view>

namespace siomq::tyo_mq {

inline constexpr std::string_view kAnyProducer = "TYO-MQ-ALL";
inline constexpr std::string_view kAllEventsSuffix = "-TM-ALL";

// Appends `s` lowercased: ASCII only, as std::tolower in the "C" locale the server runs in, without its
// per-character call.
inline void append_lower(std::string& out, std::string_view s) {
  size_t at = out.size();
  out.append(s);
  for (size_t i = at; i < out.size(); ++i) {
    char c = out[i];
    if (c >= 'A' && c <= 'Z') out[i] = static_cast<char>(c + ('a' - 'A'));
  }
}

inline std::string lower(std::string_view s) {
  std::string out;
  append_lower(out, s);
  return out;
}

// Replaces `out` with the key of (producer, event), reusing its buffer (the router builds one per message).
inline void assign_subscription_key(std::string& out, std::string_view producer, std::string_view event) {
  out.clear();
  // A "scope all" subscription (event TM-ALL) is keyed where the router looks for it (§0 row 3).
  append_lower(out, producer);
  if (event == "TM-ALL") {
    out.append(kAllEventsSuffix);
    return;
  }
  out.push_back('-');
  append_lower(out, event);
}

inline std::string subscription_key(std::string_view producer, std::string_view event) {
  std::string key;
  key.reserve(producer.size() + event.size() + 1);
  assign_subscription_key(key, producer, event);
  return key;
}

}  // namespace siomq::tyo_mq
