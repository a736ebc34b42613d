// The notes of durable delivery across nodes (cluster/durable_homes.h), on <c>:durable: a move asked of
// the node holding a consumer's queues, and a section offered to the node it was written for. Pure; any
// thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace siomq::cluster {

inline constexpr const char* kDurableChannel = "durable";

// A note on <c>:durable. `move`: node `from` is to move `consumer`'s queues of `realm` to node `to`.
// `adopt`: the section `section` was written for node `to`, which adopts it now.
struct DurableNote {
  enum class Kind { move, adopt } kind = Kind::move;
  std::string realm, consumer, from, to, section;
};
std::string encode_durable_note(const DurableNote& note);
// nullopt when the text is not such a note (validated whole, at most kMaxNoteBytes).
std::optional<DurableNote> decode_durable_note(std::string_view text);

// Whether `section` may name a section (a node id, or "move:" and a random id): printable ASCII without
// spaces, at most 128 bytes. Sections' key prefixes never overlap: the families' hash names hold no ':'.
bool valid_section(std::string_view section);

}  // namespace siomq::cluster
