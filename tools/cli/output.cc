// Printing and exit codes (tools/cli/output.h).
#include "tools/cli/output.h"

#include <algorithm>
#include <cstdio>

#include "wire/base64.h"
#include "wire/js_json.h"

namespace siomq::cli {

int exit_code_of(const Error& e) {
  switch (e.code) {
    case 404: return kExitNotFound;
    case errc::timeout: return kExitTimeout;
    case errc::unreachable:
    case errc::disconnected:
    case errc::closed: return kExitUnreachable;
    default: return kExitRefused;
  }
}

std::string dump(const nlohmann::json& doc, int indent) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json json_or_string(std::string_view text) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return std::string(text);
  return doc;
}

bool is_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

void put_data(nlohmann::json& doc, std::string_view data) {
  if (is_utf8(data)) {
    doc["data"] = std::string(data);
  } else {
    std::string b64;
    base64::encode_append(b64, data);
    doc["data_base64"] = b64;
  }
}

void Output::print_json(const nlohmann::json& doc) const { line(dump(doc)); }

void Output::line(std::string_view text) const {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void Output::progress(std::string_view text) const {
  if (quiet_) return;
  std::fprintf(stderr, "%.*s\n", static_cast<int>(text.size()), text.data());
  std::fflush(stderr);
}

void Output::progress(std::string_view verb, int64_t done, int64_t total) const {
  if (total <= 1 || done % std::max<int64_t>(1, total / 10) != 0) return;
  progress(std::string(verb) + " " + std::to_string(done) + "/" + std::to_string(total));
}

void Output::note(std::string_view text) const {
  std::fprintf(stderr, "siomq: %.*s\n", static_cast<int>(text.size()), text.data());
  std::fflush(stderr);
}

int Output::fail(std::string_view what, const Error& e) const {
  std::string text(what);
  text += ": " + e.message;
  if (e.code != 0) text += " (code " + std::to_string(e.code) + ")";
  note(text);
  if (json_) print_json({{"error", {{"code", e.code}, {"message", e.message}}}});
  return exit_code_of(e);
}

int Output::usage(std::string_view message) const {
  note(message);
  return kExitUsage;
}

std::string Table::text() const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&width](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  std::string out;
  auto write = [&out, &width](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = i < row.size() ? row[i] : "";
      line += cell;
      if (i + 1 < width.size()) line.append(width[i] - cell.size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  write(header_);
  for (const auto& row : rows_) write(row);
  return out;
}

void Table::print(const Output& out) const {
  std::string t = text();
  if (!t.empty()) t.pop_back();
  out.line(t);
}

Fields& Fields::add(std::string label, std::string value) {
  rows_.emplace_back(std::move(label), std::move(value));
  return *this;
}

void Fields::print(const Output& out) const {
  size_t width = 0;
  for (const auto& [label, value] : rows_) width = std::max(width, label.size());
  for (const auto& [label, value] : rows_) out.line(label + ":" + std::string(width - label.size() + 2, ' ') + value);
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  while (!text.empty()) {
    size_t at = text.find(sep);
    std::string_view item = text.substr(0, at);
    if (!item.empty()) out.emplace_back(item);
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return out;
}

std::string human_bytes(int64_t bytes) {
  if (bytes < 0) return "unlimited";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string limit(int64_t value) { return value < 0 ? "unlimited" : std::to_string(value); }

std::string counted(int64_t n, std::string_view noun, std::string_view plural) {
  std::string out = std::to_string(n) + " ";
  if (n == 1) return out.append(noun);
  if (!plural.empty()) return out.append(plural);
  return out.append(noun).append("s");
}

std::string iso_time(int64_t unix_ms) { return unix_ms > 0 ? js::iso_date(unix_ms) : std::string(); }

}  // namespace siomq::cli
