// WebSocket (RFC 6455) framing without extensions. Pure codec shared by the server and the client library.
//
// The reader turns a byte stream into whole messages and control frames; it keeps only the bytes of an
// unfinished frame, so an idle connection holds no buffer. The writer produces frame headers that a
// connection gathers with the payloads into one write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "wire/result.h"

namespace siomq::ws {

enum class Opcode : uint8_t { kContinuation = 0, kText = 1, kBinary = 2, kClose = 8, kPing = 9, kPong = 10 };

// Close codes used by this project.
inline constexpr uint16_t kCloseNormal = 1000;
inline constexpr uint16_t kCloseGoingAway = 1001;
inline constexpr uint16_t kCloseProtocolError = 1002;
inline constexpr uint16_t kCloseInvalidData = 1007;
inline constexpr uint16_t kCloseTooBig = 1009;

// Largest frame header: 2 bytes, 8 bytes of extended length, 4 bytes of mask.
inline constexpr size_t kMaxHeaderSize = 14;

// Writes a frame header into `out` and returns its length. `mask` is null for server frames.
size_t encode_header(uint8_t* out, Opcode opcode, bool fin, uint64_t payload_size, const uint8_t* mask);
// XORs `data` with the 4-byte mask, starting at mask position `offset`.
void apply_mask(char* data, size_t n, const uint8_t* mask, size_t offset = 0);

// The Sec-WebSocket-Accept value for a client's Sec-WebSocket-Key.
std::string accept_key(std::string_view client_key);

// What the reader found in the stream.
struct Event {
  enum Kind { kMessage, kPing, kPong, kClose } kind = kMessage;
  bool binary = false;
  std::string_view payload;  // valid until the next call into the reader
  uint16_t close_code = 0;
};

// Reassembles frames into messages. The error code of a failure is the close code to send.
class Reader {
 public:
  // `expect_masked`: true on a server (client frames must be masked), false on a client.
  Reader(bool expect_masked, size_t max_message_size)
      : max_message_(max_message_size), expect_masked_(expect_masked) {}

  // Consumes `data` (it may be modified in place for unmasking) and calls `on_event(const Event&)` for
  // each complete message or control frame. Stops at the first error, or when the handler returns false.
  template <class F>
  Status feed(char* data, size_t n, F&& on_event);

  bool has_partial() const { return !pending_.empty() || in_message_; }
  // The memory held for an unfinished frame or message (0 when there is none).
  size_t held() const { return has_partial() ? pending_.capacity() + message_.capacity() : 0; }

 private:
  // Parses one frame from [p, p+n). Returns the bytes consumed (0: need more) or an error.
  Result<size_t> next(char* p, size_t n, Event& ev, bool& have_event);
  // Hands on a whole message, after checking that a text message is UTF-8.
  Status complete(Event& ev, bool& have_event, bool binary, std::string_view payload);
  // Keeps the `left` unparsed bytes at `p` for the next feed. When they are most of `joined` (the
  // pending frame grown by this call) the buffer itself is kept: copying it out on every read made a
  // large frame arriving in 64 KiB reads cost quadratic time (32 MiB: 5.7 s of CPU). A small rest is
  // copied into a buffer of its size, and nothing left keeps no buffer, so a connection holds memory for
  // what it has not finished, not for the largest frame it ever sent.
  void keep_rest(std::string& joined, const char* p, size_t left) {
    if (left == 0) {
      std::string().swap(pending_);
    } else if (!joined.empty() && p >= joined.data() && p <= joined.data() + joined.size() &&
               left >= joined.capacity() / 4) {
      joined.erase(0, static_cast<size_t>(p - joined.data()));
      pending_.swap(joined);
    } else {
      pending_.assign(p, left);
      pending_.shrink_to_fit();
    }
  }

  size_t max_message_;
  std::string pending_;  // bytes of an unfinished frame
  std::string message_;  // payload of an unfinished fragmented message
  bool expect_masked_;
  bool in_message_ = false;
  bool message_binary_ = false;
};

template <class F>
Status Reader::feed(char* data, size_t n, F&& on_event) {
  std::string joined;  // an unfinished frame from the last call, completed by `data`
  char* p = data;
  size_t left = n;
  if (!pending_.empty()) {
    joined.swap(pending_);
    joined.append(data, n);
    p = joined.data();
    left = joined.size();
  }
  while (left > 0) {
    Event ev;
    bool have = false;
    auto used = next(p, left, ev, have);
    if (!used) return used.error();
    if (*used == 0) break;
    p += *used;
    left -= *used;
    if (have && !on_event(static_cast<const Event&>(ev))) {
      keep_rest(joined, p, left);
      return Ok{};
    }
  }
  keep_rest(joined, p, left);
  if (!in_message_ && message_.capacity() > 65536) std::string().swap(message_);
  return Ok{};
}

}  // namespace siomq::ws
