#include "wire/websocket.h"

#include <openssl/sha.h>
#include <simdjson.h>

#include <cstring>

#include "wire/base64.h"

namespace siomq::ws {
namespace {

// Codes a peer may send (RFC 6455 7.4, IANA registry; as Node's ws accepts): 1004-1006 and 1015 are
// reserved for local use and never valid on the wire.
bool valid_close_code(uint16_t c) {
  return (c >= 1000 && c <= 1014 && c != 1004 && c != 1005 && c != 1006) || (c >= 3000 && c <= 4999);
}

}  // namespace

size_t encode_header(uint8_t* out, Opcode opcode, bool fin, uint64_t size, const uint8_t* mask) {
  size_t n = 0;
  out[n++] = static_cast<uint8_t>((fin ? 0x80 : 0) | static_cast<uint8_t>(opcode));
  uint8_t mask_bit = mask ? 0x80 : 0;
  if (size < 126) {
    out[n++] = static_cast<uint8_t>(mask_bit | size);
  } else if (size <= 0xffff) {
    out[n++] = mask_bit | 126;
    out[n++] = static_cast<uint8_t>(size >> 8);
    out[n++] = static_cast<uint8_t>(size);
  } else {
    out[n++] = mask_bit | 127;
    for (int i = 7; i >= 0; --i) out[n++] = static_cast<uint8_t>(size >> (8 * i));
  }
  if (mask) {
    std::memcpy(out + n, mask, 4);
    n += 4;
  }
  return n;
}

void apply_mask(char* data, size_t n, const uint8_t* mask, size_t offset) {
  // Eight bytes at a time with the key repeated (starting at `offset` in it), the tail a byte at a
  // time: every frame a client sends is masked, so this runs over every inbound byte.
  uint8_t key[8];
  for (size_t i = 0; i < 8; ++i) key[i] = mask[(i + offset) & 3];
  uint64_t word_key;
  std::memcpy(&word_key, key, 8);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    w ^= word_key;
    std::memcpy(data + i, &w, 8);
  }
  for (; i < n; ++i) data[i] = static_cast<char>(data[i] ^ key[i & 7]);
}

std::string accept_key(std::string_view client_key) {
  static constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  std::string input(client_key);
  input.append(kGuid);
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  return base64::encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

Result<size_t> Reader::next(char* p, size_t n, Event& ev, bool& have_event) {
  auto* u = reinterpret_cast<uint8_t*>(p);
  if (n < 2) return size_t{0};
  bool fin = u[0] & 0x80;
  if (u[0] & 0x70) return make_error("reserved bits set", kCloseProtocolError);
  auto opcode = static_cast<Opcode>(u[0] & 0x0f);
  bool masked = u[1] & 0x80;
  if (masked != expect_masked_) return make_error("bad masking", kCloseProtocolError);
  uint64_t len = u[1] & 0x7f;
  size_t h = 2;
  if (len == 126) {
    if (n < 4) return size_t{0};
    len = (uint64_t{u[2]} << 8) | u[3];
    h = 4;
  } else if (len == 127) {
    if (n < 10) return size_t{0};
    len = 0;
    for (int i = 0; i < 8; ++i) len = (len << 8) | u[2 + i];
    if (len >> 63) return make_error("bad length", kCloseProtocolError);
    h = 10;
  }
  uint8_t mask[4] = {0, 0, 0, 0};
  if (masked) {
    if (n < h + 4) return size_t{0};
    std::memcpy(mask, u + h, 4);
    h += 4;
  }
  bool control = static_cast<uint8_t>(opcode) & 0x08;
  if (control) {
    if (!fin || len > 125) return make_error("bad control frame", kCloseProtocolError);
    if (opcode != Opcode::kClose && opcode != Opcode::kPing && opcode != Opcode::kPong)
      return make_error("unknown opcode", kCloseProtocolError);
  } else {
    if (opcode != Opcode::kContinuation && opcode != Opcode::kText && opcode != Opcode::kBinary)
      return make_error("unknown opcode", kCloseProtocolError);
    if (opcode == Opcode::kContinuation && !in_message_) return make_error("unexpected continuation", kCloseProtocolError);
    if (opcode != Opcode::kContinuation && in_message_) return make_error("expected continuation", kCloseProtocolError);
    uint64_t so_far = in_message_ ? message_.size() : 0;
    if (len > max_message_ || so_far + len > max_message_) return make_error("message too big", kCloseTooBig);
  }
  if (n - h < len) return size_t{0};
  char* payload = p + h;
  if (masked) apply_mask(payload, static_cast<size_t>(len), mask);
  std::string_view body(payload, static_cast<size_t>(len));

  if (control) {
    have_event = true;
    if (opcode == Opcode::kPing) {
      ev.kind = Event::kPing;
      ev.payload = body;
    } else if (opcode == Opcode::kPong) {
      ev.kind = Event::kPong;
      ev.payload = body;
    } else {
      ev.kind = Event::kClose;
      if (len == 1) return make_error("bad close frame", kCloseProtocolError);
      if (len >= 2) {
        ev.close_code = static_cast<uint16_t>((uint8_t(body[0]) << 8) | uint8_t(body[1]));
        ev.payload = body.substr(2);
        if (!valid_close_code(ev.close_code)) return make_error("bad close code", kCloseProtocolError);
        if (!simdjson::validate_utf8(ev.payload.data(), ev.payload.size()))
          return make_error("invalid UTF-8", kCloseInvalidData);
      }
    }
    return h + static_cast<size_t>(len);
  }

  bool binary = opcode == Opcode::kBinary || (opcode == Opcode::kContinuation && message_binary_);
  if (fin && !in_message_) {
    // The common case: a whole message in one frame, handed on from the caller's buffer.
    auto st = complete(ev, have_event, binary, body);
    if (!st) return st.error();
    return h + static_cast<size_t>(len);
  }
  if (!in_message_) {
    in_message_ = true;
    message_binary_ = binary;
    message_.clear();
  }
  message_.append(body);
  if (fin) {
    in_message_ = false;
    auto st = complete(ev, have_event, message_binary_, message_);
    if (!st) return st.error();
  }
  return h + static_cast<size_t>(len);
}

Status Reader::complete(Event& ev, bool& have_event, bool binary, std::string_view payload) {
  if (!binary && !simdjson::validate_utf8(payload.data(), payload.size()))
    return make_error("invalid UTF-8", kCloseInvalidData);
  have_event = true;
  ev.kind = Event::kMessage;
  ev.binary = binary;
  ev.payload = payload;
  return Ok{};
}

}  // namespace siomq::ws
