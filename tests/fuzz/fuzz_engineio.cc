// libFuzzer target for the Engine.IO codec: every decoder sees the raw input; whatever decodes must survive
// encode_payload and decode to the same packets again.
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wire/engineio.h"

namespace {

using namespace siomq::eio;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool same(const std::vector<Packet>& a, const std::vector<Packet>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type != b[i].type || a[i].binary != b[i].binary || a[i].data != b[i].data) return false;
  }
  return true;
}

// Re-encodes decoded packets as a text-framed polling body and decodes it again.
void check_round_trip(const std::vector<Packet>& packets, int protocol) {
  std::vector<std::string> storage;  // frames are views; their bytes live here
  storage.reserve(packets.size());
  std::vector<Frame> frames;
  for (const auto& p : packets) {
    if (p.binary) {
      check(p.type == PacketType::kMessage);
      frames.push_back(Frame{true, p.data});
    } else {
      storage.push_back(static_cast<char>('0' + static_cast<int>(p.type)) + p.data);
      frames.push_back(Frame{false, storage.back()});
    }
  }
  auto again = decode_payload(encode_payload(frames, protocol), protocol, false);
  check(again.ok());
  check(same(*again, packets));
}

bool all_text_is_utf8(const std::vector<Packet>& packets) {
  for (const auto& p : packets) {
    if (!p.binary && !simdjson::validate_utf8(p.data.data(), p.data.size())) return false;
  }
  return true;
}

// The v4 text framing cannot carry a record separator inside a text packet.
bool no_separator_in_text(const std::vector<Packet>& packets) {
  for (const auto& p : packets) {
    if (!p.binary && p.data.find('\x1e') != std::string::npos) return false;
  }
  return true;
}

void check_packet(const Packet& p) {
  check(static_cast<int>(p.type) >= 0 && static_cast<int>(p.type) <= 6);
  check(!p.binary || p.type == PacketType::kMessage);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  auto text = decode_text(in);
  check(text.ok() == (!in.empty() && in[0] >= '0' && in[0] <= '6'));
  if (text.ok()) {
    check(!text->binary);
    check(static_cast<int>(text->type) == in[0] - '0');
    check(text->data == in.substr(1));
  }

  auto bin4 = decode_binary(in, 4);
  check(bin4.ok() && bin4->binary && bin4->type == PacketType::kMessage && bin4->data == in);
  auto bin3 = decode_binary(in, 3);
  check(bin3.ok() == (!in.empty() && in[0] == 4));
  if (bin3.ok()) check(bin3->binary && bin3->data == in.substr(1));

  // v4: the round trip holds for every body that decodes.
  auto v4 = decode_payload(in, 4, false);
  if (v4.ok()) {
    check(!v4->empty());
    check(no_separator_in_text(*v4));
    for (const auto& p : *v4) check_packet(p);
    check_round_trip(*v4, 4);
  }

  // v3: lengths are UTF-16 code units, which only mean something for valid UTF-8 text.
  auto v3 = decode_payload(in, 3, false);
  if (v3.ok()) {
    check(!v3->empty());
    for (const auto& p : *v3) check_packet(p);
    if (all_text_is_utf8(*v3)) check_round_trip(*v3, 3);
  }

  auto v3b = decode_payload(in, 3, true);
  if (v3b.ok()) {
    check(!v3b->empty());
    for (const auto& p : *v3b) check_packet(p);
    if (no_separator_in_text(*v3b)) check_round_trip(*v3b, 4);
    if (all_text_is_utf8(*v3b)) check_round_trip(*v3b, 3);
  }
  return 0;
}
