#include "wire/engineio.h"

#include "wire/base64.h"

namespace siomq::eio {
namespace {

constexpr char kRecordSeparator = '\x1e';

bool valid_type(int t) { return t >= 0 && t <= 6; }

// Returns the byte length of `units` UTF-16 code units at the start of `s`, or npos when `s` is shorter
// or the count would split a surrogate pair.
size_t utf8_prefix_for_utf16_units(std::string_view s, size_t units) {
  size_t i = 0;
  while (units > 0) {
    if (i >= s.size()) return std::string_view::npos;
    auto c = static_cast<uint8_t>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return std::string_view::npos;
    size_t cost = len == 4 ? 2 : 1;
    if (cost > units) return std::string_view::npos;
    units -= cost;
    i += len;
  }
  return i;
}

Result<Packet> decode_base64_packet(std::string_view text) {
  // "b<base64>" (v4) or "b4<base64>" (v3): a binary message.
  auto bytes = base64::decode(text);
  if (!bytes) return make_error("invalid base64 in binary packet");
  return Packet{PacketType::kMessage, true, std::move(*bytes)};
}

// Appends a decoded packet to `out`, or passes its error on.
Status push(std::vector<Packet>& out, Result<Packet> p, size_t max_packets) {
  if (!p) return p.error();
  if (out.size() >= max_packets) return make_error("payload holds too many packets for the maximum payload");
  out.push_back(std::move(*p));
  return Ok{};
}

Result<std::vector<Packet>> decode_payload_v4(std::string_view body, size_t max_packets) {
  std::vector<Packet> out;
  size_t start = 0;
  while (true) {
    size_t end = body.find(kRecordSeparator, start);
    std::string_view part = body.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    bool binary = !part.empty() && part[0] == 'b';
    auto st = push(out, binary ? decode_base64_packet(part.substr(1)) : decode_text(part), max_packets);
    if (!st) return st.error();
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

Result<std::vector<Packet>> decode_payload_v3_text(std::string_view body, size_t max_packets) {
  std::vector<Packet> out;
  if (body.empty()) return make_error("empty payload");
  size_t i = 0;
  while (i < body.size()) {
    size_t colon = body.find(':', i);
    if (colon == std::string_view::npos || colon == i || colon - i > 10) return make_error("bad payload length");
    size_t units = 0;
    for (size_t k = i; k < colon; ++k) {
      if (body[k] < '0' || body[k] > '9') return make_error("bad payload length");
      units = units * 10 + static_cast<size_t>(body[k] - '0');
    }
    std::string_view rest = body.substr(colon + 1);
    size_t bytes = utf8_prefix_for_utf16_units(rest, units);
    if (bytes == std::string_view::npos || units == 0) return make_error("payload length mismatch");
    std::string_view part = rest.substr(0, bytes);
    bool binary = part[0] == 'b';
    if (binary && (part.size() < 2 || part[1] != '4')) return make_error("bad binary packet");
    auto st = push(out, binary ? decode_base64_packet(part.substr(2)) : decode_text(part), max_packets);
    if (!st) return st.error();
    i = colon + 1 + bytes;
  }
  return out;
}

// v3 binary framing: <0 text|1 binary><length as digit bytes 0-9><0xff><packet>.
Result<std::vector<Packet>> decode_payload_v3_binary(std::string_view body, size_t max_packets) {
  std::vector<Packet> out;
  if (body.empty()) return make_error("empty payload");
  size_t i = 0;
  while (i < body.size()) {
    auto kind = static_cast<uint8_t>(body[i++]);
    if (kind > 1) return make_error("bad binary payload marker");
    size_t len = 0;
    size_t digits = 0;
    while (i < body.size() && static_cast<uint8_t>(body[i]) != 0xff) {
      auto d = static_cast<uint8_t>(body[i]);
      if (d > 9 || ++digits > 10) return make_error("bad binary payload length");
      len = len * 10 + d;
      ++i;
    }
    if (i >= body.size() || digits == 0) return make_error("bad binary payload length");
    ++i;  // 0xff
    if (len == 0 || len > body.size() - i) return make_error("payload length mismatch");
    std::string_view part = body.substr(i, len);
    i += len;
    auto st = push(out, kind == 0 ? decode_text(part) : decode_binary(part, 3), max_packets);
    if (!st) return st.error();
  }
  return out;
}

}  // namespace

size_t utf16_length(std::string_view utf8) {
  size_t units = 0;
  for (unsigned char c : utf8) {
    if ((c & 0xc0) != 0x80) units += (c >= 0xf0) ? 2 : 1;
  }
  return units;
}

Result<Packet> decode_text(std::string_view text) {
  if (text.empty()) return make_error("empty packet");
  int t = text[0] - '0';
  if (!valid_type(t)) return make_error("unknown packet type");
  return Packet{static_cast<PacketType>(t), false, std::string(text.substr(1))};
}

Result<Packet> decode_binary(std::string_view bytes, int protocol) {
  if (protocol == 3) {
    if (bytes.empty() || bytes[0] != 4) return make_error("binary packet is not a message");
    bytes.remove_prefix(1);
  }
  return Packet{PacketType::kMessage, true, std::string(bytes)};
}

Result<std::vector<Packet>> decode_payload(std::string_view body, int protocol, bool binary_body, size_t max_cost) {
  if (body.size() > max_cost) return make_error("payload larger than the maximum payload");
  // Counted while decoding, so a body over budget is refused before it has been turned into packets.
  size_t max_packets = (max_cost - body.size()) / kPayloadPacketOverhead;
  if (protocol == 4) return decode_payload_v4(body, max_packets);
  return binary_body ? decode_payload_v3_binary(body, max_packets) : decode_payload_v3_text(body, max_packets);
}

std::string encode_payload(std::span<const Frame> frames, int protocol) {
  std::string out;
  size_t total = 0;
  for (const auto& f : frames) total += (f.binary ? base64::encoded_size(f.bytes.size()) + 2 : f.bytes.size()) + 12;
  out.reserve(total);
  bool first = true;
  for (const auto& f : frames) {
    if (protocol == 4) {
      if (!first) out.push_back(kRecordSeparator);
      if (f.binary) {
        out.push_back('b');
        base64::encode_append(out, f.bytes);
      } else {
        out.append(f.bytes);
      }
    } else if (f.binary) {
      out.append(std::to_string(base64::encoded_size(f.bytes.size()) + 2));
      out.append(":b4");
      base64::encode_append(out, f.bytes);
    } else {
      out.append(std::to_string(utf16_length(f.bytes)));
      out.push_back(':');
      out.append(f.bytes);
    }
    first = false;
  }
  return out;
}

}  // namespace siomq::eio
