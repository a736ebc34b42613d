// libFuzzer target for the Socket.IO codec.
//
// Input layout: byte 0 is how many of the following parts are binary attachments (mod 16); the rest is
// split on 0xff (never valid in JSON text) into parts. The first part is fed to a Decoder as text, the
// next n parts as binary attachments, and any further parts as text again, so the decoder's state
// machine sees out-of-order messages too. Every packet the Decoder returns must be internally consistent,
// survive encode_text/decode_text, and its JSON must normalise (js::normalize) to a fixed point.
// (Numbers beyond 64 bits are taken as JSON.parse takes them: see js::tame_numbers.) A second Decoder is
// fed the same parts with an Outline, as the server feeds it (a text EVENT is then checked by the one pass
// of wire/json_outline): both must agree on every answer, and the outline must find the elements the
// scanners find.
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wire/js_json.h"
#include "wire/json_outline.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace {

using namespace siomq::sio;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool is_binary_type(PacketType t) { return t == PacketType::kBinaryEvent || t == PacketType::kBinaryAck; }

void check_packet(const Packet& p) {
  check(validate(p).ok());
  check(p.attachments.size() == p.attachment_count);
  check(is_binary_type(p.type) || p.attachment_count == 0);
  check(!p.nsp.empty() && p.nsp[0] == '/');
  if (p.type == PacketType::kEvent || p.type == PacketType::kBinaryEvent) check(p.event == event_name(p));

  auto again = decode_text(encode_text(p));
  check(again.ok());
  check(again->type == p.type);
  check(again->nsp == p.nsp);
  check(again->id == p.id);
  check(again->data == p.data);
  check(again->attachment_count == p.attachment_count);

  // Valid JSON always normalises (JSON.stringify(JSON.parse(x))), and normalising is idempotent.
  if (!p.data.empty()) {
    auto once = siomq::js::normalize(p.data);
    check(once.ok());
    auto twice = siomq::js::normalize(*once);
    check(twice.ok() && *twice == *once);
  }

  // Raw spans of valid JSON: the elements (and an object's members) found by json_spans are the values
  // the parser sees, and the event name unescapes to what the parser read.
  if (p.type == PacketType::kEvent || p.type == PacketType::kBinaryEvent || p.type == PacketType::kAck) {
    auto elements = siomq::json_spans::array_elements(p.data);
    check(elements.ok());
    std::string rebuilt = "[";
    for (size_t i = 0; i < elements->size(); ++i) {
      if (i) rebuilt += ",";
      auto one = siomq::js::normalize((*elements)[i]);
      check(one.ok());
      rebuilt += *one;
      if ((*elements)[i].front() == '{') check(siomq::json_spans::object_members((*elements)[i]).ok());
    }
    rebuilt += "]";
    check(rebuilt == *siomq::js::normalize(p.data));
    if (p.type != PacketType::kAck) check(*siomq::json_spans::unescape(elements->front()) == p.event);
  }
}

// A JSON string built by append_json_string must parse back to the same text.
void check_json_string(std::string_view text) {
  if (!simdjson::validate_utf8(text.data(), text.size())) return;
  Packet p;
  p.data = "[";
  append_json_string(p.data, text);
  p.data += "]";
  check(validate(p).ok());
  check(event_name(p) == text);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t at = s.find(sep);
    parts.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return parts;
    s.remove_prefix(at + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t attachments = data[0] % 16;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto parts = split(rest, '\xff');

  check_json_string(parts[0]);

  auto direct = decode_text(parts[0]);
  if (direct.ok()) check(direct->attachment_count <= kMaxAttachments);

  Decoder decoder, outlining;
  siomq::json::Outline outline;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool binary = i >= 1 && i <= attachments;
    const bool was_waiting = decoder.awaiting_attachments();
    auto r = binary ? decoder.feed_binary(std::string(parts[i])) : decoder.feed_text(parts[i]);
    auto o = binary ? outlining.feed_binary(std::string(parts[i])) : outlining.feed_text(parts[i], &outline);
    check(r.ok() == o.ok());
    if (!r.ok()) {
      if (binary && !was_waiting) check(!decoder.awaiting_attachments());
      if (!binary && was_waiting) check(decoder.awaiting_attachments());
      decoder = Decoder();  // a connection is closed on the first error
      outlining = Decoder();
      continue;
    }
    check(!(r->has_value() && decoder.awaiting_attachments()));
    check(r->has_value() == o->has_value());
    if (r->has_value()) {
      check_packet(**r);
      const Packet& p = **o;
      check(p.type == (**r).type && p.data == (**r).data && p.event == (**r).event && p.id == (**r).id);
      // An outlined EVENT's notes are the elements the scanner finds (read against the moved packet's data).
      if (!binary && p.type == PacketType::kEvent) {
        check(outline.describes(p.data) && outline.root_is_array());
        auto elements = siomq::json_spans::array_elements(p.data);
        check(elements.ok() && elements->size() == outline.size());
        for (size_t k = 0; k < elements->size() && k < siomq::json::Outline::kElements; ++k)
          check(outline.element(p.data, k) == (*elements)[k]);
      } else if (!binary) {
        check(!outline.describes(p.data));
      }
    } else {
      check(decoder.awaiting_attachments());
    }
  }
  return 0;
}
