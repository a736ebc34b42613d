// libFuzzer target for the WebSocket frame reader.
//
// Input layout: byte 0 holds the number of chunk-size bytes k (bits 0-2) and a message size limit
// (bits 3-4); bytes 1..k are chunk sizes (each value + 1, used in turn); the rest is the byte stream.
// The stream goes to a server reader (masked frames expected) and a client reader (unmasked expected),
// once whole and once in chunks: both ways must give the same events and the same outcome, and every
// event must respect the protocol's limits. Each message is then re-framed and read back.
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wire/websocket.h"

namespace {

using namespace siomq::ws;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Seen {
  Event::Kind kind;
  bool binary;
  std::string payload;
  uint16_t close_code;
  bool operator==(const Seen&) const = default;
};

struct Outcome {
  bool ok = true;
  int code = 0;
  std::vector<Seen> events;
  bool partial = false;
  bool operator==(const Outcome&) const = default;
};

void check_event(const Event& ev, size_t max) {
  switch (ev.kind) {
    case Event::kMessage:
      check(ev.payload.size() <= max);
      if (!ev.binary) check(simdjson::validate_utf8(ev.payload.data(), ev.payload.size()));
      break;
    case Event::kPing:
    case Event::kPong:
      check(ev.payload.size() <= 125);
      break;
    case Event::kClose:
      check(ev.payload.size() <= 123);
      check(ev.close_code != 0 || ev.payload.empty());
      check(ev.close_code == 0 || (ev.close_code >= 1000 && ev.close_code < 5000));
      check(simdjson::validate_utf8(ev.payload.data(), ev.payload.size()));
      break;
  }
}

Outcome run(std::string_view stream, bool masked, size_t max, std::string_view chunks) {
  Reader reader(masked, max);
  Outcome out;
  std::string bytes(stream);  // the reader unmasks in place
  size_t pos = 0;
  size_t turn = 0;
  while (pos < bytes.size()) {
    size_t n = bytes.size() - pos;
    if (!chunks.empty()) n = std::min(n, size_t{static_cast<uint8_t>(chunks[turn++ % chunks.size()])} + 1);
    auto st = reader.feed(bytes.data() + pos, n, [&](const Event& ev) {
      check_event(ev, max);
      out.events.push_back({ev.kind, ev.binary, std::string(ev.payload), ev.close_code});
      return true;
    });
    pos += n;
    if (!st.ok()) {
      out.ok = false;
      out.code = st.error().code;
      check(out.code == kCloseProtocolError || out.code == kCloseInvalidData || out.code == kCloseTooBig);
      return out;
    }
  }
  out.partial = reader.has_partial();
  return out;
}

// Frames each event again (as a peer would send it) and checks the reader gives it back unchanged.
void check_reframed(const std::vector<Seen>& events, bool masked, size_t max) {
  static constexpr uint8_t kMask[4] = {0xa5, 0x01, 0xff, 0x3c};
  std::string stream;
  for (const auto& e : events) {
    Opcode op = e.kind == Event::kPing ? Opcode::kPing
                : e.kind == Event::kPong ? Opcode::kPong
                : e.kind == Event::kClose ? Opcode::kClose
                : e.binary ? Opcode::kBinary
                           : Opcode::kText;
    std::string payload;
    if (e.kind == Event::kClose && e.close_code != 0) {
      payload.push_back(static_cast<char>(e.close_code >> 8));
      payload.push_back(static_cast<char>(e.close_code & 0xff));
    }
    payload += e.payload;
    uint8_t header[kMaxHeaderSize];
    size_t h = encode_header(header, op, true, payload.size(), masked ? kMask : nullptr);
    if (masked) apply_mask(payload.data(), payload.size(), kMask);
    stream.append(reinterpret_cast<const char*>(header), h);
    stream += payload;
  }
  Outcome again = run(stream, masked, max, {});
  check(again.ok && !again.partial);
  check(again.events == events);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr size_t kLimits[4] = {16, 125, 4096, size_t{1} << 20};
  const size_t k = data[0] & 7;
  const size_t max = kLimits[(data[0] >> 3) & 3];
  if (size < 1 + k) return 0;
  const std::string_view chunks(reinterpret_cast<const char*>(data) + 1, k);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1 + k, size - 1 - k);

  for (bool masked : {true, false}) {
    Outcome whole = run(stream, masked, max, {});
    Outcome split = run(stream, masked, max, chunks);
    Outcome bytewise = run(stream, masked, max, std::string_view("\0", 1));
    check(whole == split);
    check(whole == bytewise);
    check_reframed(whole.events, masked, max);
  }
  return 0;
}
