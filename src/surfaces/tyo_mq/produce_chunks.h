// PRODUCE_CHUNK reassembly (protocol §3.6): the pieces of one socket's large publishes, held until each
// transfer is whole, within budgets counted in bytes *and* entries.
//
// What one transfer costs is its data plus a fixed charge per piece and per transfer (the map nodes and
// the id), so empty pieces and long transfer ids are paid for. Bounds: kMaxTransferBytesPerSocket per
// socket, kMaxTransferBytesGlobal for every socket together (a process-wide counter), kMaxTransfers
// transfers per socket, kMaxPieces pieces per transfer, ids of at most kMaxTransferId bytes, and a
// transfer that received nothing for kTransferIdleMs is dropped. A piece that would break a bound drops
// its transfer and is answered with an error; nothing else changes.
//
// Threading: one ChunkAssembler per socket, used on that socket's worker only; the global counter is
// atomic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "surfaces/tyo_mq/requests.h"
#include "wire/result.h"

namespace siomq::surfaces {

inline constexpr size_t kMaxTransferBytesPerSocket = 64 * 1024 * 1024;
inline constexpr size_t kMaxTransferBytesGlobal = 512 * 1024 * 1024;
inline constexpr size_t kMaxTransfers = 16;
inline constexpr size_t kMaxPieces = 4096;
inline constexpr size_t kMaxTransferId = 256;
inline constexpr int64_t kTransferIdleMs = 60'000;
// The charge of one piece and one transfer beyond their bytes: about what their map nodes take.
inline constexpr size_t kPieceOverhead = 96;
inline constexpr size_t kTransferOverhead = 160;

class ChunkAssembler {
 public:
  ChunkAssembler() = default;
  ~ChunkAssembler();
  ChunkAssembler(const ChunkAssembler&) = delete;
  ChunkAssembler& operator=(const ChunkAssembler&) = delete;

  // Adds one piece at `now_ms`. Returns the joined text when it completed its transfer, nullopt while
  // pieces are missing (then `received` / `total` say how far the transfer is), or an error.
  Result<std::optional<std::string>> add(ProduceChunk chunk, int64_t now_ms);
  size_t received(const std::string& transfer_id) const;
  // Drops every transfer that received nothing for over kTransferIdleMs before `now_ms`. add() does it
  // too; the surface's timer calls it while transfers are open, so a socket that stops sending does not
  // keep its share of the global budget.
  void drop_idle(int64_t now_ms);

  size_t bytes() const { return bytes_; }
  size_t transfers() const { return transfers_.size(); }
  // What every socket's transfers hold now.
  static size_t global_bytes();

 private:
  struct Transfer {
    size_t total = 0;
    size_t cost = 0;  // bytes charged: data, overheads and the id
    int64_t last_ms = 0;
    std::map<size_t, std::string> pieces;
  };
  void drop(std::map<std::string, Transfer>::iterator it);
  void charge(Transfer& t, size_t cost);

  std::map<std::string, Transfer> transfers_;
  size_t bytes_ = 0;
};

}  // namespace siomq::surfaces
