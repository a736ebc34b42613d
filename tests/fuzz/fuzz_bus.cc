// libFuzzer target for the bus's request parsers (src/surfaces/bus/*_requests.cc, fields.cc) and its
// subject rules (src/wire/bus_subject.cc): what any client with one socket hands the bus.
//
// The input is a request object's text. When it is a JSON object the Socket.IO decoder would accept, it
// is read as every bus request, with one binary attachment for placeholders. Invariants: nothing crashes,
// recurses on the input, or runs longer than linear time (libFuzzer's -timeout); what parses obeys the
// contract (subjects valid, headers canonical JSON objects of strings, integers in range).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "surfaces/bus/core_requests.h"
#include "surfaces/bus/fields.h"
#include "surfaces/bus/stream_requests.h"
#include "wire/bus_subject.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"

namespace {

using namespace siomq;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_header(const std::string& header) {
  if (header.empty()) return;
  check(js::validate(header).ok());
  auto members = json_spans::object_members(header);
  check(members.ok() && !members->empty());
  for (const auto& m : *members) check(!m.value.empty() && m.value.front() == '"');
}

void subjects(std::string_view text) {
  bool publishable = siomq::bus::subject_error(text) == nullptr;
  bool pattern = siomq::bus::pattern_error(text) == nullptr;
  if (publishable) {
    check(pattern);
    check(siomq::bus::subject_matches(text, text));
    check(siomq::bus::patterns_overlap(text, text));
    check(siomq::bus::pattern_covers(text, text));
  }
  if (pattern) {
    check(siomq::bus::patterns_overlap(text, ">"));
    check(siomq::bus::pattern_covers(">", text));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  subjects(text);
  if (!js::validate(text).ok()) return 0;
  std::string args = "[\"e\",";
  args.append(text);
  args.push_back(']');
  std::vector<std::string> attachments = {std::string("\x00\x01", 2)};
  if (auto p = surfaces::bus::parse_pub(args, attachments)) {
    check(siomq::bus::subject_error(p->subject) == nullptr);
    check(p->reply.empty() || siomq::bus::subject_error(p->reply) == nullptr);
    check_header(p->header);
  }
  if (auto s = surfaces::bus::parse_sub(args)) check(siomq::bus::pattern_error(s->subject) == nullptr);
  (void)surfaces::bus::parse_unsub(args);
  if (auto r = surfaces::bus::parse_request(args, attachments)) {
    check(r->timeout_ms >= 1 && r->timeout_ms <= 60000);
    check_header(r->header);
  }
  if (auto p = surfaces::bus::parse_stream_pub(args, attachments)) {
    check(siomq::bus::subject_error(p->subject) == nullptr && p->msg_id.size() <= 256);
    check_header(p->header);
  }
  if (auto p = surfaces::bus::parse_pull(args)) check(p->batch >= 1 && p->batch <= 1000 && p->wait_ms <= 60000);
  if (auto a = surfaces::bus::parse_ack(args)) check(a->seq >= 1);
  // What a config becomes is what the store keeps: it must read back the same.
  if (auto c = surfaces::bus::parse_stream_create(args)) {
    auto again = broker::parse_stream_config(broker::to_json(*c));
    check(again.ok() && *again == *c);
  }
  if (auto c = surfaces::bus::parse_consumer_add(args)) {
    auto again = broker::parse_consumer_config(broker::to_json(*c));
    check(again.ok() && *again == *c);
  }
  (void)surfaces::bus::parse_stream_name(args);
  (void)surfaces::bus::parse_purge(args);
  (void)surfaces::bus::parse_get(args);
  (void)surfaces::bus::parse_consumer_ref(args);
  return 0;
}
