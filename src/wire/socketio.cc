#include "wire/socketio.h"

#include <simdjson.h>

#include <charconv>
#include <cstring>
#include <utility>
#include <vector>

#include "wire/js_json.h"
#include "wire/json_outline.h"
#include "wire/json_spans.h"

namespace siomq::sio {
namespace {

// simdjson parsers keep scratch memory sized to the largest document seen; one per thread is reused.
simdjson::dom::parser& thread_parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Walks the document for placeholders, as Socket.IO's reconstruction does: an object whose
// `_placeholder` is true must carry a number `num` that indexes an existing attachment. Iterative (an
// explicit stack of what is left to visit), so client data sets no C++ stack depth.
Status check_placeholder(simdjson::dom::object obj, size_t attachments) {
  auto num = obj["num"];
  if (num.error()) return make_error("illegal attachments");
  auto v = num.value_unsafe();
  double n = 0;
  if (v.is_int64()) n = static_cast<double>(v.get_int64().value_unsafe());
  else if (v.is_uint64()) n = static_cast<double>(v.get_uint64().value_unsafe());
  else if (v.is_double()) n = v.get_double().value_unsafe();
  else return make_error("illegal attachments");
  if (!(n >= 0) || n >= static_cast<double>(attachments) || n != static_cast<double>(static_cast<size_t>(n)))
    return make_error("illegal attachments");
  return Ok{};
}

Status check_placeholders(simdjson::dom::element root, size_t attachments) {
  std::vector<std::pair<simdjson::dom::element, int>> left{{root, 0}};
  while (!left.empty()) {
    auto [el, depth] = left.back();
    left.pop_back();
    if (depth > 1024) return make_error("JSON nested too deeply");
    if (el.type() == simdjson::dom::element_type::ARRAY) {
      simdjson::dom::array arr = el.get_array().value_unsafe();  // a local: the range must outlive the loop
      for (auto child : arr) left.emplace_back(child, depth + 1);
    } else if (el.type() == simdjson::dom::element_type::OBJECT) {
      simdjson::dom::object obj = el.get_object().value_unsafe();
      auto ph = obj["_placeholder"];
      if (!ph.error() && ph.value_unsafe().is_bool() && ph.value_unsafe().get_bool().value_unsafe()) {
        if (auto st = check_placeholder(obj, attachments); !st) return st;
        continue;
      }
      for (auto field : obj) left.emplace_back(field.value, depth + 1);
    }
  }
  return Ok{};
}

}  // namespace

Result<Packet> decode_text(std::string_view text) {
  if (text.empty()) return make_error("empty packet");
  Packet p;
  int t = text[0] - '0';
  if (t < 0 || t > 6) return make_error("unknown packet type");
  p.type = static_cast<PacketType>(t);
  size_t i = 1;

  if (p.type == PacketType::kBinaryEvent || p.type == PacketType::kBinaryAck) {
    size_t start = i;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i == start || i >= text.size() || text[i] != '-' || i - start > 6) return make_error("illegal attachments");
    std::from_chars(text.data() + start, text.data() + i, p.attachment_count);
    if (p.attachment_count > kMaxAttachments) return make_error("too many attachments");
    ++i;
  }

  if (i < text.size() && text[i] == '/') {
    size_t comma = text.find(',', i);
    size_t end = comma == std::string_view::npos ? text.size() : comma;
    p.nsp.assign(text.substr(i, end - i));
    i = comma == std::string_view::npos ? text.size() : comma + 1;
  }

  if (i < text.size() && is_digit(text[i])) {
    size_t start = i;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i - start > 15) return make_error("ack id too large");
    uint64_t id = 0;
    std::from_chars(text.data() + start, text.data() + i, id);
    p.id = id;
  }

  p.data.assign(text.substr(i));
  return p;
}

// Validates `p`; for events, stores the event name in `*event` when it is given.
Status check_attachment_placeholders(std::string_view json, size_t attachments) {
  std::string tamed;
  auto doc = js::parse(thread_parser(), json, tamed);
  if (doc.error()) return make_error("invalid payload");
  return check_placeholders(doc.value_unsafe(), attachments);
}

static Status validate_packet(const Packet& p, std::string* event) {
  using simdjson::dom::element_type;
  if (p.data.empty()) {
    if (p.type == PacketType::kConnect || p.type == PacketType::kDisconnect) return Ok{};
    return make_error("missing payload");
  }
  if (p.type == PacketType::kDisconnect) return make_error("unexpected payload");
  if (p.attachments.size() != p.attachment_count) return make_error("attachments missing");
  std::string tamed;
  auto doc = js::parse(thread_parser(), p.data, tamed);
  if (doc.error()) return make_error("invalid payload");
  auto root = doc.value_unsafe();
  switch (p.type) {
    case PacketType::kConnect:
      if (root.type() != element_type::OBJECT) return make_error("invalid payload");
      break;
    case PacketType::kConnectError:
      if (root.type() != element_type::OBJECT && root.type() != element_type::STRING)
        return make_error("invalid payload");
      break;
    case PacketType::kEvent:
    case PacketType::kBinaryEvent: {
      if (root.type() != element_type::ARRAY) return make_error("invalid payload");
      auto arr = root.get_array().value_unsafe();
      if (arr.size() == 0 || arr.at(0).value_unsafe().type() != element_type::STRING)
        return make_error("invalid payload");
      if (event) *event = std::string(arr.at(0).value_unsafe().get_string().value_unsafe());
      break;
    }
    case PacketType::kAck:
    case PacketType::kBinaryAck:
      if (root.type() != element_type::ARRAY) return make_error("invalid payload");
      break;
    case PacketType::kDisconnect:
      break;
  }
  if (p.type == PacketType::kBinaryEvent || p.type == PacketType::kBinaryAck)
    return check_placeholders(root, p.attachment_count);
  return Ok{};
}

Status validate(const Packet& p) { return validate_packet(p, nullptr); }

// A text EVENT packet checked as validate_packet checks one, in json::validate's single pass, which notes
// its elements in `outline` for the handler; the event name is read from the noted first element.
static Status validate_event(Packet& p, json::Outline& outline) {
  if (p.data.empty()) return make_error("missing payload");
  if (!json::validate(p.data, &outline)) return make_error("invalid payload");
  std::string_view first = outline.element(p.data, 0);
  if (!outline.root_is_array() || first.empty() || first.front() != '"') return make_error("invalid payload");
  if (first.find('\\') == std::string_view::npos) {
    p.event.assign(first.substr(1, first.size() - 2));
  } else {
    auto name = json_spans::unescape(first);
    if (!name) return make_error("invalid payload");
    p.event = std::move(*name);
  }
  return Ok{};
}

std::string event_name(const Packet& p) {
  std::string tamed;
  auto doc = js::parse(thread_parser(), p.data, tamed);
  if (doc.error()) return {};
  auto first = doc.value_unsafe().at(0);
  if (first.error()) return {};
  auto s = first.value_unsafe().get_string();
  return s.error() ? std::string() : std::string(s.value_unsafe());
}

Result<std::optional<Packet>> Decoder::feed_text(std::string_view text, json::Outline* outline) {
  if (outline) outline->clear();
  if (pending_) return make_error("text packet while attachments were expected");
  auto p = decode_text(text);
  if (!p) return p.error();
  if (p->attachment_count > 0) {
    // The declared attachments are charged their overhead at once: a count the budget cannot hold is
    // refused before any of them is kept.
    pending_bytes_ = text.size() + p->attachment_count * kAttachmentOverhead;
    if (pending_bytes_ > max_bytes_) return make_error("packet larger than the maximum payload");
    pending_ = std::make_unique<Packet>(std::move(*p));
    return std::optional<Packet>{};
  }
  auto st = outline && p->type == PacketType::kEvent ? validate_event(*p, *outline) : validate_packet(*p, &p->event);
  if (!st) return st.error();
  return std::optional<Packet>{std::move(*p)};
}

Result<std::optional<Packet>> Decoder::feed_binary(std::string bytes) {
  if (!pending_) return make_error("unexpected binary attachment");
  pending_bytes_ += bytes.size();
  if (pending_bytes_ > max_bytes_) {
    pending_.reset();
    return make_error("packet larger than the maximum payload");
  }
  pending_->attachments.push_back(std::move(bytes));
  if (pending_->attachments.size() < pending_->attachment_count) return std::optional<Packet>{};
  Packet p = std::move(*pending_);
  pending_.reset();
  auto st = validate_packet(p, &p.event);
  if (!st) return st.error();
  return std::optional<Packet>{std::move(p)};
}

void append_text(std::string& out, PacketType type, std::string_view nsp, std::optional<uint64_t> id,
                 std::string_view data, size_t attachment_count) {
  out.push_back(static_cast<char>('0' + static_cast<int>(type)));
  if (type == PacketType::kBinaryEvent || type == PacketType::kBinaryAck) {
    out.append(std::to_string(attachment_count));
    out.push_back('-');
  }
  if (!nsp.empty() && nsp != "/") {
    out.append(nsp);
    out.push_back(',');
  }
  if (id) out.append(std::to_string(*id));
  out.append(data);
}

std::string encode_text(const Packet& p) {
  std::string out;
  append_text(out, p.type, p.nsp, p.id, p.data, p.attachment_count);
  return out;
}

namespace {

// Whether a byte of the word `w` is one a JSON string escapes: a control character, '"' or '\\'. The
// classic tests for a zero byte and a byte below n, exact as a yes/no; bytes from 0x80 up have their
// high bit set, which ~w masks out of each test.
constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighs = 0x8080808080808080ull;
bool word_needs_escape(uint64_t w) {
  uint64_t control = (w - kOnes * 0x20) & ~w;
  uint64_t quote = w ^ (kOnes * '"');
  quote = (quote - kOnes) & ~quote;
  uint64_t backslash = w ^ (kOnes * '\\');
  backslash = (backslash - kOnes) & ~backslash;
  return ((control | quote | backslash) & kHighs) != 0;
}

// The length of the longest prefix of `s` with nothing to escape, found a word at a time.
size_t clean_prefix(std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (word_needs_escape(w)) break;
  }
  for (; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == '"' || c == '\\') break;
  }
  return i;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  // Ids, names, keys and most texts have nothing to escape: their bytes are checked eight at a time and
  // copied at once (a durable message's row and delivery quote about ten such strings).
  const size_t clean = clean_prefix(s);
  if (clean == s.size()) {  // in place: one resize, not an append and two push_backs
    const size_t at = out.size();
    out.resize(at + s.size() + 2);
    char* p = out.data() + at;
    p[0] = '"';
    if (!s.empty()) std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    return;
  }
  out.push_back('"');
  out.append(s.data(), clean);
  size_t run = clean;  // start of the bytes not yet copied: runs that need no escape are appended whole
  for (size_t i = clean; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.substr(run, i - run));
    run = i + 1;
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default:
        out.append("\\u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
    }
  }
  out.append(s.substr(run));
  out.push_back('"');
}

}  // namespace siomq::sio
