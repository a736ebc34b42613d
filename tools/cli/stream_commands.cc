// `siomq stream add|ls|info|rm|purge|get|edit`: the bus's streams, managed on "/control" through the
// public client (siomq/bus.h).
#include <CLI/CLI.hpp>

#include "tools/cli/bus_format.h"
#include "tools/cli/commands.h"
#include "tools/cli/connect.h"
#include "tools/cli/output.h"

namespace siomq::cli {
namespace {

using nlohmann::json;

// The StreamConfig fields given on the command line (add starts from the defaults, edit from the stream).
struct ConfigFlags {
  std::string name;
  std::optional<std::vector<std::string>> subjects;
  std::optional<std::string> storage, retention, discard, dead_letter_stream;
  std::optional<int64_t> max_msgs, max_bytes, max_age_ms, max_msg_size, max_msgs_per_subject, dedup_window_ms;

  void apply(bus::StreamConfig& c) const {
    c.name = name;
    if (subjects) c.subjects = *subjects;
    if (storage) c.storage = *storage;
    if (retention) c.retention = *retention;
    if (discard) c.discard = *discard;
    if (dead_letter_stream) c.dead_letter_stream = *dead_letter_stream;
    if (max_msgs) c.max_msgs = *max_msgs;
    if (max_bytes) c.max_bytes = *max_bytes;
    if (max_age_ms) c.max_age_ms = *max_age_ms;
    if (max_msg_size) c.max_msg_size = *max_msg_size;
    if (max_msgs_per_subject) c.max_msgs_per_subject = *max_msgs_per_subject;
    if (dedup_window_ms) c.dedup_window_ms = *dedup_window_ms;
  }
};

template <class T>
void optional_flag(CLI::App* cmd, const std::string& name, std::optional<T>& target, const std::string& help) {
  cmd->add_option_function<T>(name, [&target](const T& v) { target = v; }, help);
}

void add_config_flags(CLI::App* cmd, ConfigFlags& f) {
  cmd->add_option("name", f.name, "Stream name (A-Za-z0-9_-)")->required();
  cmd->add_option_function<std::vector<std::string>>("--subjects", [&f](const std::vector<std::string>& v) { f.subjects = v; },
                                                     "Subjects, comma-separated (add: default the stream's name)")
      ->delimiter(',');
  cmd->add_option_function<std::string>("--storage", [&f](const std::string& v) { f.storage = v; }, "file or memory")
      ->check(CLI::IsMember({"file", "memory"}));
  cmd->add_option_function<std::string>("--retention", [&f](const std::string& v) { f.retention = v; },
                                        "limits, interest or workqueue")
      ->check(CLI::IsMember({"limits", "interest", "workqueue"}));
  cmd->add_option_function<std::string>("--discard", [&f](const std::string& v) { f.discard = v; },
                                        "At a limit: old (drop the oldest) or new (refuse)")
      ->check(CLI::IsMember({"old", "new"}));
  optional_flag(cmd, "--max-msgs", f.max_msgs, "Messages kept at most (-1 unlimited)");
  optional_flag(cmd, "--max-bytes", f.max_bytes, "Bytes kept at most (-1 unlimited)");
  optional_flag(cmd, "--max-age-ms", f.max_age_ms, "Age of the oldest message in ms (0 unlimited)");
  optional_flag(cmd, "--max-msg-size", f.max_msg_size, "Largest message in bytes (-1 unlimited)");
  optional_flag(cmd, "--max-msgs-per-subject", f.max_msgs_per_subject, "Messages kept per subject (-1 unlimited)");
  optional_flag(cmd, "--dedup-window-ms", f.dedup_window_ms, "Msg-Id dedup window in ms");
  optional_flag(cmd, "--dead-letter-stream", f.dead_letter_stream, "Stream that receives dead letters");
}

// The stream as it is now, printed (after add and edit).
int show(bus::Conn& conn, const std::string& name, const Output& out, const char* what) {
  auto info = conn.stream_info(name).get();
  if (!info) return out.fail(what, info.error());
  if (out.json()) out.print_json(to_json(*info));
  else print_stream(out, *info);
  return kExitOk;
}

int add(const ConfigFlags& f, const Context& ctx, const Output& out) {
  bus::StreamConfig c;
  f.apply(c);
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("stream add", conn.error());
  auto r = (*conn)->create_stream(c).get();
  if (!r) return out.fail("stream add", r.error());
  return show(**conn, f.name, out, "stream add");
}

int edit(const ConfigFlags& f, const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("stream edit", conn.error());
  auto info = (*conn)->stream_info(f.name).get();
  if (!info) return out.fail("stream edit", info.error());
  bus::StreamConfig c = info->stream;
  f.apply(c);
  auto r = (*conn)->update_stream(c).get();
  if (!r) return out.fail("stream edit", r.error());
  return show(**conn, f.name, out, "stream edit");
}

int ls(const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("stream ls", conn.error());
  auto list = (*conn)->list_streams().get();
  if (!list) return out.fail("stream ls", list.error());
  json docs = json::array();
  Table table({"NAME", "SUBJECTS", "STORAGE", "RETENTION", "MESSAGES", "BYTES", "CONSUMERS", "LAST SEQ"});
  for (const auto& meta : *list) {
    auto info = (*conn)->stream_info(meta.name).get();
    if (!info) {
      if (info.error().code == 404) continue;  // deleted meanwhile
      return out.fail("stream ls", info.error());
    }
    docs.push_back(to_json(*info));
    const auto& s = info->state;
    table.add({meta.name, join(meta.subjects, ","), meta.storage, meta.retention, std::to_string(s.messages),
               human_bytes(static_cast<int64_t>(s.bytes)), std::to_string(s.consumer_count), std::to_string(s.last_seq)});
  }
  if (out.json()) out.print_json(json{{"streams", docs}});
  else if (table.size() == 0) out.line("no streams");
  else table.print(out);
  return kExitOk;
}

int info(const std::string& name, const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("stream info", conn.error());
  auto i = (*conn)->stream_info(name).get();
  if (!i) return out.fail("stream info", i.error());
  if (out.json()) {
    out.print_json(to_json(*i));
    return kExitOk;
  }
  print_stream(out, *i);
  if (!i->consumers.empty()) {
    out.line("");
    Table table({"CONSUMER", "FILTER", "ACK", "PENDING", "ACK PENDING", "REDELIVERED"});
    for (const auto& c : i->consumers)
      table.add({c.name, c.config.filter_subject, c.config.ack_policy, std::to_string(c.num_pending),
                 std::to_string(c.num_ack_pending), std::to_string(c.num_redelivered)});
    table.print(out);
  }
  return kExitOk;
}

int rm(const std::string& name, const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("stream rm", conn.error());
  if (auto st = (*conn)->delete_stream(name).get(); !st) return out.fail("stream rm", st.error());
  if (out.json()) out.print_json(json{{"deleted", name}});
  else out.line("deleted stream " + name);
  return kExitOk;
}

struct PurgeFlags {
  std::string name, subject;
  std::optional<uint64_t> keep;
};

int purge(const PurgeFlags& f, const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("stream purge", conn.error());
  bus::PurgeOptions o;
  o.subject = f.subject;
  o.keep = f.keep;
  auto r = (*conn)->purge_stream(f.name, o).get();
  if (!r) return out.fail("stream purge", r.error());
  if (out.json()) out.print_json(json{{"stream", f.name}, {"purged", *r}});
  else out.line("purged " + counted(static_cast<int64_t>(*r), "message") + " from " + f.name);
  return kExitOk;
}

struct GetFlags {
  std::string name, last_by_subject;
  std::optional<uint64_t> seq;
};

int get(const GetFlags& f, const Context& ctx, const Output& out) {
  if (f.seq.has_value() == !f.last_by_subject.empty()) return out.usage("stream get needs a seq or --last-by-subject SUBJECT (one of them)");
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("stream get", conn.error());
  auto m = f.seq ? (*conn)->get_message(f.name, *f.seq).get() : (*conn)->get_last_message(f.name, f.last_by_subject).get();
  if (!m) return out.fail("stream get", m.error());
  if (out.json()) out.print_json(to_json(*m));
  else print_message(out, *m, 1);
  return kExitOk;
}

}  // namespace

void add_stream_commands(Commands& commands) {
  CLI::App* stream = commands.group(commands.app(), "stream", "Manage the bus's streams (on \"/control\")",
                                    "  siomq stream add ORDERS --subjects 'orders.>' --max-msgs 100000\n"
                                    "  siomq stream ls\n");
  auto a = std::make_shared<ConfigFlags>();
  CLI::App* add_cmd = commands.add(*stream, "add", "Create a stream",
                                   "  siomq stream add ORDERS --subjects 'orders.>'\n"
                                   "  siomq stream add EVENTS --subjects 'ev.*,audit.>' --storage memory --max-age-ms 86400000\n"
                                   "  siomq stream add JOBS --retention workqueue --discard new --dead-letter-stream JOBS_DLQ\n",
                                   [a](const Context& ctx, const Output& out) { return add(*a, ctx, out); });
  add_config_flags(add_cmd, *a);

  auto e = std::make_shared<ConfigFlags>();
  CLI::App* edit_cmd = commands.add(*stream, "edit", "Change a stream's config (only the flags given)",
                                    "  siomq stream edit ORDERS --max-msgs 1000\n"
                                    "  siomq stream edit ORDERS --subjects 'orders.>,returns.>'\n",
                                    [e](const Context& ctx, const Output& out) { return edit(*e, ctx, out); });
  add_config_flags(edit_cmd, *e);

  commands.add(*stream, "ls", "List the streams with their message counts", "  siomq stream ls\n  siomq stream ls --json\n",
               [](const Context& ctx, const Output& out) { return ls(ctx, out); });

  auto name = std::make_shared<std::string>();
  CLI::App* info_cmd = commands.add(*stream, "info", "A stream's config, state and consumers", "  siomq stream info ORDERS\n",
                                    [name](const Context& ctx, const Output& out) { return info(*name, ctx, out); });
  info_cmd->add_option("name", *name, "Stream name")->required();

  auto rm_name = std::make_shared<std::string>();
  CLI::App* rm_cmd = commands.add(*stream, "rm", "Delete a stream and its messages", "  siomq stream rm ORDERS\n",
                                  [rm_name](const Context& ctx, const Output& out) { return rm(*rm_name, ctx, out); });
  rm_cmd->add_option("name", *rm_name, "Stream name")->required();

  auto p = std::make_shared<PurgeFlags>();
  CLI::App* purge_cmd = commands.add(*stream, "purge", "Delete a stream's messages (sequence numbers are not reused)",
                                     "  siomq stream purge ORDERS\n"
                                     "  siomq stream purge ORDERS --subject orders.eu --keep 10\n",
                                     [p](const Context& ctx, const Output& out) { return purge(*p, ctx, out); });
  purge_cmd->add_option("name", p->name, "Stream name")->required();
  purge_cmd->add_option("--subject", p->subject, "Only this subject");
  purge_cmd->add_option_function<uint64_t>("--keep", [p](uint64_t v) { p->keep = v; }, "Keep the newest N");

  auto g = std::make_shared<GetFlags>();
  CLI::App* get_cmd = commands.add(*stream, "get", "Print one stored message, by seq or the last of a subject",
                                   "  siomq stream get ORDERS 1\n"
                                   "  siomq stream get ORDERS --last-by-subject orders.eu --json\n",
                                   [g](const Context& ctx, const Output& out) { return get(*g, ctx, out); });
  get_cmd->add_option("name", g->name, "Stream name")->required();
  get_cmd->add_option_function<uint64_t>("seq", [g](uint64_t v) { g->seq = v; }, "Sequence number");
  get_cmd->add_option("--last-by-subject", g->last_by_subject, "The last message of this subject");
}

}  // namespace siomq::cli
