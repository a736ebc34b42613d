#include "surfaces/tyo_mq/produce_chunks.h"

#include <atomic>
#include <utility>

namespace siomq::surfaces {
namespace {

std::atomic<size_t> g_held{0};  // bytes charged by every ChunkAssembler of the process

Error refused(std::string message) { return make_error("PRODUCE_CHUNK: " + std::move(message), kMalformedRequest); }

}  // namespace

ChunkAssembler::~ChunkAssembler() { g_held.fetch_sub(bytes_, std::memory_order_relaxed); }

size_t ChunkAssembler::global_bytes() { return g_held.load(std::memory_order_relaxed); }

void ChunkAssembler::charge(Transfer& t, size_t cost) {
  t.cost += cost;
  bytes_ += cost;
  g_held.fetch_add(cost, std::memory_order_relaxed);
}

void ChunkAssembler::drop(std::map<std::string, Transfer>::iterator it) {
  bytes_ -= it->second.cost;
  g_held.fetch_sub(it->second.cost, std::memory_order_relaxed);
  transfers_.erase(it);
}

// Transfers whose client stopped sending: checked on every piece, so a socket that goes on publishing
// never keeps a dead transfer past the deadline. (A socket that falls silent holds its transfers, within
// its budget, until it disconnects.)
void ChunkAssembler::drop_idle(int64_t now_ms) {
  for (auto it = transfers_.begin(); it != transfers_.end();) {
    auto next = std::next(it);
    if (now_ms - it->second.last_ms > kTransferIdleMs) drop(it);
    it = next;
  }
}

size_t ChunkAssembler::received(const std::string& transfer_id) const {
  auto it = transfers_.find(transfer_id);
  return it == transfers_.end() ? 0 : it->second.pieces.size();
}

Result<std::optional<std::string>> ChunkAssembler::add(ProduceChunk chunk, int64_t now_ms) {
  drop_idle(now_ms);
  if (chunk.transfer_id.size() > kMaxTransferId) return refused("transferId is longer than 256 bytes");
  if (chunk.total > kMaxPieces) return refused("total is more than 4096 pieces");
  auto it = transfers_.find(chunk.transfer_id);
  if (it == transfers_.end()) {
    if (transfers_.size() >= kMaxTransfers) return refused("more than 16 transfers in flight on this socket");
    it = transfers_.emplace(chunk.transfer_id, Transfer{}).first;
    it->second.total = chunk.total;
    charge(it->second, kTransferOverhead + chunk.transfer_id.size());
  } else if (it->second.total != chunk.total) {
    drop(it);
    return refused("total changed within a transfer; transfer dropped");
  }
  Transfer& t = it->second;
  t.last_ms = now_ms;
  auto piece = t.pieces.find(chunk.index);
  // A repeated index replaces its piece (the reference would count it twice).
  size_t old_cost = piece == t.pieces.end() ? 0 : piece->second.size() + kPieceOverhead;
  size_t new_cost = chunk.data.size() + kPieceOverhead;
  if (new_cost > old_cost) {
    size_t more = new_cost - old_cost;
    if (bytes_ + more > kMaxTransferBytesPerSocket) {
      drop(it);
      return refused("too much chunked data in flight; transfer dropped");
    }
    if (g_held.load(std::memory_order_relaxed) + more > kMaxTransferBytesGlobal) {
      drop(it);
      return refused("the server holds too much chunked data; transfer dropped, retry later");
    }
  }
  // Charged as the difference, so a replaced piece is not paid twice.
  bytes_ = bytes_ + new_cost - old_cost;
  t.cost = t.cost + new_cost - old_cost;
  if (new_cost >= old_cost) g_held.fetch_add(new_cost - old_cost, std::memory_order_relaxed);
  else g_held.fetch_sub(old_cost - new_cost, std::memory_order_relaxed);
  t.pieces[chunk.index] = std::move(chunk.data);
  if (t.pieces.size() < t.total) return std::optional<std::string>{};

  std::string joined;
  joined.reserve(t.cost);
  for (auto& [index, data] : t.pieces) joined += data;
  drop(it);
  return std::optional<std::string>{std::move(joined)};
}

}  // namespace siomq::surfaces
