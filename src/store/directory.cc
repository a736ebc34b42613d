// The JSON encoding of the directory family (directory.h).
#include "store/directory.h"

#include "store/record_json.h"

namespace siomq::store {
namespace {

using namespace record_json;

constexpr std::array<std::string_view, 5> kDirectoryFields = {"directory", "realm", "key", "value", "updated_at"};
static_assert(kDirectoryFields.size() <= kMaxFields);

}  // namespace

std::string encode_directory_entry(const DirectoryEntry& e) {
  std::string out;
  out.reserve(80 + e.directory.size() + e.realm.size() + e.key.size() + e.value.size());
  out.push_back('{');
  append_key(out, "directory");
  append_string(out, e.directory);
  out.push_back(',');
  append_key(out, "realm");
  append_string(out, e.realm);
  out.push_back(',');
  append_key(out, "key");
  append_string(out, e.key);
  out.push_back(',');
  append_key(out, "value");
  out.append(e.value);
  out.push_back(',');
  append_key(out, "updated_at");
  append_time(out, e.updated_ms);
  out.push_back('}');
  return out;
}

Result<DirectoryEntry> decode_directory_entry(std::string_view text) {
  Fields f("directory entry", text, kDirectoryFields);
  DirectoryEntry e;
  e.directory = f.string("directory");
  e.realm = f.string("realm");
  e.key = f.string("key");
  e.value = f.json_value("value");
  e.updated_ms = f.time("updated_at");
  if (f.error()) return *f.error();
  return e;
}

std::string directory_key(std::string_view directory, std::string_view realm, std::string_view key) {
  std::string out;
  out.reserve(directory.size() + realm.size() + key.size() + 2);
  out.append(directory);
  out.push_back('\0');
  out.append(realm);
  out.push_back('\0');
  out.append(key);
  return out;
}

Op put(const DirectoryEntry& entry) {
  return Op{Family::directory_entry, Op::Kind::put, directory_key(entry.directory, entry.realm, entry.key),
            encode_directory_entry(entry)};
}

Op erase_directory_entry(std::string_view directory, std::string_view realm, std::string_view key) {
  return Op{Family::directory_entry, Op::Kind::erase, directory_key(directory, realm, key), {}};
}

Op quarantine(const DirectoryEntry& entry) {
  return Op{Family::directory_entry, Op::Kind::quarantine, directory_key(entry.directory, entry.realm, entry.key),
            encode_directory_entry(entry)};
}

}  // namespace siomq::store
