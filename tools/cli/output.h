// What a command prints and how it ends: human tables (aligned columns) or JSON (--json: one document,
// or one line per message for streaming commands), progress on stderr (-q silences it), errors on stderr,
// and the exit codes scripts rely on.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "siomq/result.h"

namespace siomq::cli {

// The exit codes (docs/cli.md, `siomq --help`).
enum ExitCode : int {
  kExitOk = 0,
  kExitRefused = 1,      // the server refused (its code and message are printed)
  kExitUsage = 2,        // a bad command line
  kExitUnreachable = 3,  // no server could be reached, or the connection dropped
  kExitTimeout = 4,      // no answer (or no message) in time
  kExitNotFound = 5,     // the server answered 404 (or a saved context does not exist)
};

// The exit code for a library or server error: 404 → 5, 408 → 4, no connection → 3, anything else → 1.
int exit_code_of(const Error& e);

// JSON text that never throws: bytes that are not UTF-8 become U+FFFD. indent < 0: one line.
std::string dump(const nlohmann::json& doc, int indent = -1);
// `text` as JSON when it parses, else as a JSON string (a message body printed in a JSON line).
nlohmann::json json_or_string(std::string_view text);
// Message bytes for a JSON document: {"data": "<text>"} when UTF-8, {"data_base64": "..."} otherwise.
void put_data(nlohmann::json& doc, std::string_view data);
bool is_utf8(std::string_view s);

class Output {
 public:
  Output(bool json, bool quiet) : json_(json), quiet_(quiet) {}
  bool json() const { return json_; }
  bool quiet() const { return quiet_; }

  void print_json(const nlohmann::json& doc) const;     // one line on stdout, flushed
  void line(std::string_view text) const;               // a line on stdout, flushed
  void progress(std::string_view text) const;           // a line on stderr unless -q
  // "<verb> done/total" on stderr at every tenth of `total` (when total > 1), unless -q.
  void progress(std::string_view verb, int64_t done, int64_t total) const;
  void note(std::string_view text) const;               // "siomq: <text>" on stderr, always

  // Reports `e` (stderr; with --json also {"error":{code,message}} on stdout) and returns its exit code.
  int fail(std::string_view what, const Error& e) const;
  // A usage error found after parsing: the message on stderr, exit code 2.
  int usage(std::string_view message) const;

 private:
  bool json_, quiet_;
};

// Rows printed under a header with every column padded to its widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size(); }
  std::string text() const;
  void print(const Output& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Key/value lines ("Subjects:  orders.>"), labels padded to the widest.
class Fields {
 public:
  Fields& add(std::string label, std::string value);
  void print(const Output& out) const;

 private:
  std::vector<std::pair<std::string, std::string>> rows_;
};

std::string join(const std::vector<std::string>& items, std::string_view sep = ",");
std::vector<std::string> split(std::string_view text, char sep = ',');
// "1.2 KiB", "3 B"; "-1" and other negatives as "unlimited".
std::string human_bytes(int64_t bytes);
std::string limit(int64_t value);  // a number, or "unlimited" for negatives
// "1 message", "3 messages"; `plural` when adding an s will not do ("copies").
std::string counted(int64_t n, std::string_view noun, std::string_view plural = {});
// A Unix time in ms as "2024-05-01T12:00:00.000Z" ("" for 0).
std::string iso_time(int64_t unix_ms);

}  // namespace siomq::cli
