// The file backend: RocksDB in the data directory.
//
// Keys: the family's prefix byte (family.h) followed by the record's key within its family; values are
// the families' JSON encodings.
//   'r' + seq, 8 bytes big-endian           → row (rows.h); key order is seq order
//   'd' + seq, 8 bytes big-endian           → dead row
//   's' + realm NUL key NUL consumer         → durable subscription
//   'l' + stream NUL seq (8 bytes BE)        → stream log message (stream_log.h); a stream in seq order
//   'c' + stream NUL consumer                → consumer state (consumer_state.h)
//   'e' + directory NUL realm NUL key        → directory entry (directory.h)
//   'q' + the key of an unreadable record    → the quarantine: moved aside by load(), never read
//
// The data directory:
// - missing: created (and logged), then initialised as an empty one;
// - empty: initialised: the marker file SIOMQ_STORE (a format version line) is written and synced first,
//   then RocksDB creates its files. A directory holding only the marker is a creation that was cut short
//   and is initialised again;
// - holding anything but without the marker: refused (StoreError), so that a mistyped data directory
//   never gets RocksDB files written among someone else's;
// - with the marker: RocksDB must open what is there without creating anything; a missing CURRENT or
//   corruption is a StoreError in RocksDB's own words, never a silently empty store.
//
// Space: a queue's rows are short-lived, so most of what is written is soon deleted, and a delete
// costs a tombstone until compaction carries it to the last level. Files dense with tombstones are
// compacted early (the deletion collector), and after a burst of deletes the idle writer has the record
// ranges compacted in the background (maintain()).
#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/utilities/table_properties_collectors.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>

#include "store/backend.h"
#include "store/contents_builder.h"
#include "store/seq_key.h"

namespace siomq::store {
namespace {

namespace fs = std::filesystem;

constexpr char kMarkerName[] = "SIOMQ_STORE";
constexpr std::string_view kMarkerLine = "siomq store format ";
constexpr int kFormatVersion = 1;

// Deletes since the last compaction after which an idle writer compacts the record ranges, provided
// they were at least as many as the records left (so the compaction rewrites no more live data than it
// frees). Fewer are left to the deletion collector and RocksDB's own compactions.
constexpr uint64_t kDeletesBeforeCompaction = 10000;

std::string file_key(const Op& op) {
  std::string key;
  key.reserve(1 + op.key.size());
  key.push_back(info(op.family).file_prefix);
  key.append(op.key);
  return key;
}

// A key as an error message names it: "row 42", "subscription 'realm/key/consumer'", else the family
// and its key (NUL bytes shown as '/', other unprintable bytes as \xNN), or the whole key.
std::string describe_key(std::string_view key) {
  auto family = key.empty() ? std::nullopt : family_of_file_prefix(key[0]);
  if (family && info(*family).keyed_by_row_seq) {
    if (auto seq = seq_of_key(key.substr(1))) return fmt::format("{} {}", info(*family).name, *seq);
  }
  std::string out = "key '";
  if (family) {
    out = fmt::format("{} '", info(*family).name);
    key.remove_prefix(1);
  }
  for (char c : key) {
    auto u = static_cast<unsigned char>(c);
    if (u == 0) out += '/';
    else if (u < 0x20 || u >= 0x7f || c == '\'' || c == '\\') out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out + "'";
}

std::string_view view(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

// Writes `text` to `path` and syncs it, and the directory entry with it.
void write_synced(const fs::path& path, std::string_view text) {
  auto fail = [&](const char* what) {
    throw StoreError(fmt::format("cannot {} {}: {}", what, path.string(), std::strerror(errno)));
  };
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("create");
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) fail("write");
  int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) fail("open the directory of");
  ok = ::fsync(dir) == 0;
  ::close(dir);
  if (!ok) fail("sync the directory of");
}

// The format version the marker names, or 0 when it names none.
int marker_version(const fs::path& marker) {
  std::ifstream in(marker);
  std::string line;
  if (!std::getline(in, line) || !line.starts_with(kMarkerLine)) return 0;
  try {
    return std::stoi(line.substr(kMarkerLine.size()));
  } catch (const std::exception&) {
    return 0;
  }
}

// Prepares the directory by the rules above; true when the store is to be created.
bool prepare_directory(const fs::path& dir) {
  std::error_code ec;
  auto status = fs::status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw StoreError(fmt::format("cannot use {} as the data directory: {}", dir.string(), ec.message()));
  if (!fs::exists(status)) {
    fs::create_directories(dir, ec);
    if (ec) throw StoreError(fmt::format("cannot create the data directory {}: {}", dir.string(), ec.message()));
    spdlog::info("store: created the data directory {}", dir.string());
    return true;
  }
  if (!fs::is_directory(status))
    throw StoreError(fmt::format("the data directory {} is not a directory", dir.string()));

  bool has_marker = false;
  bool has_others = false;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == kMarkerName) has_marker = true;
    else has_others = true;
  }
  if (ec) throw StoreError(fmt::format("cannot read the data directory {}: {}", dir.string(), ec.message()));
  if (!has_others) return true;
  if (!has_marker)
    throw StoreError(fmt::format(
        "{} is not a siomq data directory (it holds files but no {} marker); give an empty or new directory",
        dir.string(), kMarkerName));
  int version = marker_version(dir / kMarkerName);
  if (version != kFormatVersion)
    throw StoreError(fmt::format("{} in {} does not name store format {} (a damaged marker, or another siomq version)",
                                 kMarkerName, dir.string(), kFormatVersion));
  return false;
}

rocksdb::Options store_options(bool create) {
  rocksdb::Options o;
  o.create_if_missing = create;
  o.error_if_exists = create;
  o.paranoid_checks = true;
  // Two cores, shared with the broker's I/O threads: one flush and one compaction at a time at most.
  o.IncreaseParallelism(2);
  o.max_background_jobs = 2;
  // Rows are small and short-lived. A 16 MiB memtable holds tens of thousands of them, and a row that
  // is deleted before its memtable is flushed never reaches an SST file; three of them let writes go on
  // while one is flushed.
  o.write_buffer_size = 16 << 20;
  o.max_write_buffer_number = 3;
  // Row keys are a prefix byte and a rising sequence number: the memtable remembers where the last key
  // of each prefix went, so an insert does not walk the skip list from the top.
  o.memtable_insert_with_hint_prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(1));
  // The WAL is what a restart replays: bounding it bounds recovery time and the disk held by rows
  // written and deleted long ago (a full WAL forces the memtables out so old logs can be dropped).
  o.max_total_wal_size = 64 << 20;
  // A queue of little size: smaller levels keep compactions short on a small machine.
  o.target_file_size_base = 16 << 20;
  o.max_bytes_for_level_base = 64 << 20;
  // LZ4: JSON rows compress well, and it costs little CPU on the compaction thread.
  o.compression = rocksdb::kLZ4Compression;
  // Any 1000 consecutive entries of a new file of which half are deletes mark it for compaction, so the
  // tombstones of a drained queue do not linger in upper levels.
  o.table_properties_collector_factories.push_back(rocksdb::NewCompactOnDeletionCollectorFactory(1000, 500, 0.5));
  // RocksDB's own LOG files (not the WAL): a few small ones are enough to diagnose a problem.
  o.keep_log_file_num = 4;
  o.max_log_file_size = 8 << 20;
  return o;
}

class FileStore final : public Backend {
 public:
  FileStore(std::string dir, std::unique_ptr<rocksdb::DB> db) : dir_(std::move(dir)), db_(std::move(db)) {}
  ~FileStore() override {
    cancel_compaction_ = true;
    if (compaction_.joinable()) compaction_.join();
  }

  const char* name() const override { return "file"; }

  Contents load() override {
    ContentsBuilder contents;
    rocksdb::WriteBatch quarantine;
    rocksdb::ReadOptions options;
    options.fill_cache = false;  // everything is read once, at start-up
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(options));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view key = view(it->key());
      if (!key.empty() && key[0] == kQuarantineFilePrefix) continue;
      if (auto why = read_record(key, view(it->value()), contents)) {
        if (contents.note_quarantined() <= ContentsBuilder::kQuarantineWarnings)
          spdlog::warn("store {}: {} cannot be read ({}); moved to the quarantine", dir_, describe_key(key), *why);
        auto put = quarantine.Put(std::string(1, kQuarantineFilePrefix).append(key), it->value());
        auto del = quarantine.Delete(it->key());
        if (!put.ok() || !del.ok()) throw StoreError(fmt::format("store {}: cannot quarantine: {}", dir_, put.ToString()));
      }
    }
    if (!it->status().ok())
      throw StoreError(fmt::format("store {}: reading failed: {}", dir_, it->status().ToString()));
    if (contents.quarantined()) {
      rocksdb::WriteOptions sync;
      sync.sync = true;
      auto s = db_->Write(sync, &quarantine);
      if (!s.ok()) throw StoreError(fmt::format("store {}: cannot quarantine: {}", dir_, s.ToString()));
      spdlog::warn("store {}: {} unreadable records moved to the quarantine (keys prefixed 'q')", dir_,
                   contents.quarantined());
    }
    return std::move(contents).finish();
  }

  Status write(const std::vector<Op>& ops, bool sync) override {
    if (ops.empty()) return Ok{};
    // After a failed write (a full disk), RocksDB refuses writes until the error is cleared.
    if (failed_) {
      auto resumed = db_->Resume();
      if (!resumed.ok()) return make_error("RocksDB cannot resume after an error: " + resumed.ToString());
      failed_ = false;
    }
    quiet_perf_counters();
    rocksdb::WriteBatch batch;
    uint64_t deletes = 0;
    for (const Op& op : ops) {
      if (auto s = add_to_batch(batch, op); !s.ok()) return make_error("RocksDB refused a change: " + s.ToString());
      deletes += op.kind == Op::Kind::erase;
    }
    rocksdb::WriteOptions options;
    options.sync = sync;
    auto s = db_->Write(options, &batch);
    if (!s.ok()) {
      failed_ = true;
      return make_error("RocksDB write failed: " + s.ToString());
    }
    deletes_since_compaction_ += deletes;
    return Ok{};
  }

  // After a burst of deletes (a queue drained), compacts the record ranges so the space is given back
  // now rather than whenever later writes trigger compactions. Skipped while more is stored than was
  // deleted: that compaction would mostly rewrite live rows. It runs on a thread of its own (RocksDB
  // allows writes meanwhile): flushing and compacting 100k deleted rows takes a quarter of a second
  // here, which the writer would otherwise hold every submitter for.
  void maintain() override {
    if (compacting_) return;
    if (compaction_.joinable()) compaction_.join();
    if (deletes_since_compaction_ < kDeletesBeforeCompaction) return;
    uint64_t keys = 0;
    db_->GetIntProperty(rocksdb::DB::Properties::kEstimateNumKeys, &keys);
    if (keys > deletes_since_compaction_) return;
    deletes_since_compaction_ = 0;
    compacting_ = true;
    compaction_ = std::thread([this] {
      rocksdb::CompactRangeOptions options;
      options.exclusive_manual_compaction = false;  // RocksDB's own compactions may go on meanwhile
      options.canceled = &cancel_compaction_;
      // 'd…' to 'r…': the dead rows, the stream log and the rows (and the few directory entries between).
      const std::string begin(1, info(Family::dead_row).file_prefix), end(1, info(Family::subscription).file_prefix);
      rocksdb::Slice b(begin), e(end);
      auto s = db_->CompactRange(options, &b, &e);
      if (!s.ok() && !cancel_compaction_) spdlog::warn("store {}: compaction failed: {}", dir_, s.ToString());
      compacting_ = false;
    });
  }

  BackendStats stats() override {
    BackendStats stats;
    std::error_code ec;
    // RocksDB deletes files meanwhile: a file gone since it was listed counts for nothing.
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code size_ec;
      auto size = it->is_regular_file(size_ec) ? it->file_size(size_ec) : 0;
      if (!size_ec) stats.disk_bytes += size;
    }
    return stats;
  }

 private:
  // RocksDB counts into a thread-local perf context by default (PerfLevel::kEnableCount), which siomq
  // never reads. In a shared library every count is a __tls_get_addr call: 14% of the writer thread's
  // instructions per durable message (callgrind, 19.6k -> 16.9k a message). Off for each thread that
  // writes (the level is per thread).
  static void quiet_perf_counters() {
    thread_local bool quiet = (rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable), true);
    (void)quiet;
  }

  static rocksdb::Status add_to_batch(rocksdb::WriteBatch& batch, const Op& op) {
    const std::string key = file_key(op);
    switch (op.kind) {
      case Op::Kind::put: return batch.Put(key, op.value);
      case Op::Kind::erase: return batch.Delete(key);
      case Op::Kind::quarantine: {
        auto s = batch.Put(std::string(1, kQuarantineFilePrefix).append(key), op.value);
        return s.ok() ? batch.Delete(key) : s;
      }
    }
    return rocksdb::Status::InvalidArgument("unknown op");
  }

  // Decodes the record under `key` into `contents`; the reason when it cannot be read.
  static std::optional<std::string> read_record(std::string_view key, std::string_view value,
                                                ContentsBuilder& contents) {
    auto family = key.empty() ? std::nullopt : family_of_file_prefix(key[0]);
    if (!family) return "not a key of the store";
    return contents.add(*family, key.substr(1), value);
  }

  const std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  uint64_t deletes_since_compaction_ = 0;
  bool failed_ = false;
  std::thread compaction_;  // maintain()'s compaction, joined by the next maintain() or on closing
  std::atomic<bool> compacting_{false};
  std::atomic<bool> cancel_compaction_{false};
};

}  // namespace

std::unique_ptr<Backend> open_file(const std::string& dir) {
  const fs::path path(dir);
  const bool create = prepare_directory(path);
  if (create) write_synced(path / kMarkerName, fmt::format("{}{}\n", kMarkerLine, kFormatVersion));
  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(store_options(create), dir, &raw);
  std::unique_ptr<rocksdb::DB> db(raw);
  if (!s.ok()) throw StoreError(fmt::format("cannot open the store in {}: {}", dir, s.ToString()));
  return std::make_unique<FileStore>(dir, std::move(db));
}

}  // namespace siomq::store
