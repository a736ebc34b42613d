// PRODUCE_CHUNK reassembly: pieces join in index order, and every bound holds in bytes and in entries.
#include "surfaces/tyo_mq/produce_chunks.h"

#include <gtest/gtest.h>

namespace siomq::surfaces {
namespace {

ProduceChunk piece(std::string id, size_t index, size_t total, std::string data) {
  return ProduceChunk{std::move(id), index, total, std::move(data)};
}

TEST(ChunkAssembler, JoinsInIndexOrderAndReleasesItsBudget) {
  const size_t before = ChunkAssembler::global_bytes();
  ChunkAssembler a;
  ASSERT_FALSE(a.add(piece("t", 2, 3, "c"), 0)->has_value());
  ASSERT_FALSE(a.add(piece("t", 0, 3, "a"), 0)->has_value());
  ASSERT_FALSE(a.add(piece("t", 0, 3, "A"), 0)->has_value()) << "a repeated index replaces its piece";
  EXPECT_EQ(a.received("t"), 2u);
  EXPECT_GT(ChunkAssembler::global_bytes(), before);
  auto joined = a.add(piece("t", 1, 3, "b"), 0);
  ASSERT_TRUE(joined.ok() && joined->has_value());
  EXPECT_EQ(**joined, "Abc");
  EXPECT_EQ(a.bytes(), 0u);
  EXPECT_EQ(a.transfers(), 0u);
  EXPECT_EQ(ChunkAssembler::global_bytes(), before);
}

// 1,000,000 empty pieces used to cost nothing against the byte budget; each is charged now.
TEST(ChunkAssembler, EmptyPiecesAndIdsArePaidFor) {
  ChunkAssembler a;
  EXPECT_FALSE(a.add(piece("t", 0, 4097, ""), 0).ok()) << "more pieces than kMaxPieces";
  EXPECT_FALSE(a.add(piece(std::string(257, 'x'), 0, 2, ""), 0).ok()) << "an id over 256 bytes";
  ASSERT_TRUE(a.add(piece("t", 0, 4096, ""), 0).ok());
  EXPECT_GE(a.bytes(), kPieceOverhead + kTransferOverhead + 1);
  for (size_t i = 1; i < 4000; ++i) ASSERT_TRUE(a.add(piece("t", i, 4096, ""), 0).ok());
  EXPECT_GE(a.bytes(), 4000 * kPieceOverhead);
}

TEST(ChunkAssembler, BoundsTransfersPerSocket) {
  ChunkAssembler a;
  for (size_t i = 0; i < kMaxTransfers; ++i) ASSERT_TRUE(a.add(piece("t" + std::to_string(i), 0, 2, "x"), 0).ok());
  auto refused = a.add(piece("one-more", 0, 2, "x"), 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("16 transfers"), std::string::npos);
  EXPECT_EQ(a.transfers(), kMaxTransfers) << "the refusal changed nothing else";
}

TEST(ChunkAssembler, BoundsBytesPerSocketAndDropsTheTransfer) {
  ChunkAssembler a;
  const std::string mib(1 << 20, 'x');
  Result<std::optional<std::string>> last = std::optional<std::string>{};
  size_t i = 0;
  for (; i < 100 && last.ok(); ++i) last = a.add(piece("big", i, 100, mib), 0);
  ASSERT_FALSE(last.ok());
  EXPECT_LE(i, 64u);
  EXPECT_EQ(a.transfers(), 0u) << "the transfer that broke the bound is dropped";
  EXPECT_EQ(a.bytes(), 0u);
}

TEST(ChunkAssembler, ChangingTotalDropsTheTransfer) {
  ChunkAssembler a;
  ASSERT_TRUE(a.add(piece("t", 0, 3, "a"), 0).ok());
  EXPECT_FALSE(a.add(piece("t", 1, 2, "b"), 0).ok());
  EXPECT_EQ(a.transfers(), 0u);
}

TEST(ChunkAssembler, DropsTransfersIdleLongerThanTheDeadline) {
  ChunkAssembler a;
  ASSERT_TRUE(a.add(piece("old", 0, 2, "a"), 0).ok());
  ASSERT_TRUE(a.add(piece("new", 0, 2, "a"), kTransferIdleMs + 1).ok());
  EXPECT_EQ(a.transfers(), 1u);
  EXPECT_EQ(a.received("old"), 0u);
}

// Without another piece: the surface's timer calls drop_idle, and the bytes go back to the global budget.
TEST(ChunkAssembler, DropIdleFreesTheBudgetWithoutAnotherPiece) {
  ChunkAssembler a;
  size_t before = ChunkAssembler::global_bytes();
  ASSERT_TRUE(a.add(piece("t", 0, 2, std::string(1000, 'x')), 0).ok());
  EXPECT_GT(ChunkAssembler::global_bytes(), before);
  a.drop_idle(kTransferIdleMs);  // not idle for longer yet
  EXPECT_EQ(a.transfers(), 1u);
  a.drop_idle(kTransferIdleMs + 1);
  EXPECT_EQ(a.transfers(), 0u);
  EXPECT_EQ(a.bytes(), 0u);
  EXPECT_EQ(ChunkAssembler::global_bytes(), before);
}

TEST(ChunkAssembler, TheGlobalBudgetBoundsEverySocketTogether) {
  const std::string mib(1 << 20, 'x');
  std::vector<std::unique_ptr<ChunkAssembler>> sockets;
  bool refused = false;
  for (size_t s = 0; s < 16 && !refused; ++s) {
    sockets.push_back(std::make_unique<ChunkAssembler>());
    for (size_t i = 0; i < 60 && !refused; ++i) {
      auto r = sockets.back()->add(piece("t", i, 100, mib), 0);
      if (!r.ok()) {
        refused = true;
        EXPECT_NE(r.error().message.find("the server holds too much"), std::string::npos) << r.error().message;
      }
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_LE(ChunkAssembler::global_bytes(), kMaxTransferBytesGlobal);
  sockets.clear();
  EXPECT_EQ(ChunkAssembler::global_bytes(), 0u);
}

}  // namespace
}  // namespace siomq::surfaces
