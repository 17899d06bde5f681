// The directory's coherence state machine, transition by transition: the
// seed's Table 3 (readAccess, writeAccess, invalidate, flush, die/okToDie,
// new/delete) and our additions (acknowledged invalidates, creator-held
// chunks, lost chunks, queued conflicting requests, stale answers).
#include "directory.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace djava {
namespace sos {
namespace {

struct Sent {
  std::string kind;  // grant, invalidate, flush, error, freed, oktodie
  NodeId node = 0;
  uint64_t seq = 0;
  ChunkId id = 0;
  uint64_t txn = 0;
  sospb::Access access = sospb::ACCESS_UNSPECIFIED;
  uint64_t version = 0;
  bool has_data = false;
  std::string data;
  bool keep_shared = false;
  sospb::ErrorCode code = sospb::ERROR_UNSPECIFIED;
  std::string message;
};

class RecordingSink : public NodeSink {
 public:
  void Grant(NodeId node, uint64_t seq, sospb::Access access, ChunkId id, uint64_t version,
             const ChunkImage* image) override {
    Sent s{"grant", node, seq, id};
    s.access = access;
    s.version = version;
    s.has_data = image != nullptr;
    if (image) s.data = image->data;
    sent.push_back(s);
  }
  void Invalidate(NodeId node, ChunkId id, uint64_t txn) override {
    Sent s{"invalidate", node, 0, id, txn};
    sent.push_back(s);
  }
  void Flush(NodeId node, ChunkId id, uint64_t txn, bool keep_shared) override {
    Sent s{"flush", node, 0, id, txn};
    s.keep_shared = keep_shared;
    sent.push_back(s);
  }
  void Error(NodeId node, uint64_t seq, ChunkId id, sospb::ErrorCode code,
             const std::string& message) override {
    Sent s{"error", node, seq, id};
    s.code = code;
    s.message = message;
    sent.push_back(s);
  }
  void Freed(NodeId node, uint64_t seq, ChunkId id) override {
    sent.push_back(Sent{"freed", node, seq, id});
  }
  void OkToDie(NodeId node, uint64_t seq) override {
    sent.push_back(Sent{"oktodie", node, seq, 0});
  }
  void WrittenBack(NodeId node, ChunkId id, bool accepted) override {
    Sent s{"writtenback", node, 0, id};
    s.has_data = accepted;
    sent.push_back(s);
  }

  // Everything sent since the last Take.
  std::vector<Sent> Take() {
    std::vector<Sent> out;
    out.swap(sent);
    return out;
  }
  std::vector<Sent> sent;
};

std::unique_ptr<ChunkImage> Image(const std::string& data, uint64_t program = 0) {
  auto i = std::make_unique<ChunkImage>();
  i->program = program;
  i->data = data;
  i->class_index = 7;
  i->array_length = 3;
  i->identity_hash = 0x1234;
  return i;
}

class DirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a = dir.AddNode("a");
    b = dir.AddNode("b");
    c = dir.AddNode("c");
  }

  // A chunk created by `owner`, first fetched by `reader` for reading: after
  // this, both share it and the home copy holds `data`.
  ChunkId Published(NodeId owner, NodeId reader, const std::string& data, uint64_t seq_no = 1,
                    uint64_t program = 0) {
    ChunkId id = MakeChunkId(owner, seq_no);
    dir.Read(reader, 100, id);
    auto out = sink.Take();
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].kind, "flush");
    dir.FlushReply(owner, id, out[0].txn, Image(data, program));
    out = sink.Take();
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].kind, "grant");
    return id;
  }

  RecordingSink sink;
  Directory dir{&sink};
  NodeId a = 0, b = 0, c = 0;
};

TEST_F(DirectoryTest, NodesAreNumberedFromOneAndNamed) {
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(dir.NodeName(b), "b");
}

TEST_F(DirectoryTest, ReadOfChunkNeverSeenFlushesItFromItsCreatorKeepingItShared) {
  ChunkId id = MakeChunkId(a, 1);
  dir.Read(b, 5, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, a);
  EXPECT_TRUE(out[0].keep_shared);
  dir.FlushReply(a, id, out[0].txn, Image("hello"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, b);
  EXPECT_EQ(out[0].seq, 5u);
  EXPECT_EQ(out[0].access, sospb::SHARED);
  EXPECT_TRUE(out[0].has_data);
  EXPECT_EQ(out[0].data, "hello");
}

TEST_F(DirectoryTest, NamedChunkExistsEmptyAtHomeUntilItsFirstWriterFlushesIt) {
  ChunkId id = MakeChunkId(kNamedNode, 0x1234567);
  dir.Read(a, 1, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant") << "a named chunk needs no creator to be asked";
  EXPECT_TRUE(out[0].has_data);
  EXPECT_EQ(out[0].data, "");
  dir.Write(b, 2, id, 0);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "invalidate");
  EXPECT_EQ(out[0].node, a);
  dir.InvalidateAck(a, id, out[0].txn);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].access, sospb::EXCLUSIVE);
  // c reads: b, the owner, is asked for the bytes it wrote.
  dir.Read(c, 3, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, b);
  dir.FlushReply(b, id, out[0].txn, Image("statics"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "statics");
}

TEST_F(DirectoryTest, ReadOfHomeChunkIsGrantedAtOnce) {
  ChunkId id = Published(a, b, "x");
  dir.Read(c, 9, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, c);
  EXPECT_EQ(out[0].data, "x");
}

TEST_F(DirectoryTest, WriteInvalidatesEveryOtherSharerAndWaitsForAllAcks) {
  ChunkId id = Published(a, b, "x");  // sharers a, b
  dir.Write(c, 11, id, 0);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  std::set<NodeId> invalidated;
  for (auto& s : out) {
    EXPECT_EQ(s.kind, "invalidate");
    invalidated.insert(s.node);
  }
  EXPECT_EQ(invalidated, (std::set<NodeId>{a, b}));
  dir.InvalidateAck(a, id, out[0].txn);
  EXPECT_TRUE(sink.Take().empty()) << "granted before every sharer acknowledged";
  dir.InvalidateAck(b, id, out[0].txn);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, c);
  EXPECT_EQ(out[0].access, sospb::EXCLUSIVE);
  EXPECT_TRUE(out[0].has_data);
  EXPECT_EQ(out[0].data, "x");
}

TEST_F(DirectoryTest, UpgradeOfCurrentReadCopyCarriesNoBytes) {
  ChunkId id = Published(a, b, "x");
  dir.Write(b, 12, id, /*have_version=*/0);  // b's copy is version 0, current
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "invalidate");
  EXPECT_EQ(out[0].node, a);
  dir.InvalidateAck(a, id, out[0].txn);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].access, sospb::EXCLUSIVE);
  EXPECT_FALSE(out[0].has_data);
  EXPECT_EQ(out[0].version, 1u);
}

TEST_F(DirectoryTest, UpgradeNamingAnOldVersionGetsTheBytes) {
  ChunkId id = Published(a, b, "x");
  dir.Write(b, 12, id, /*have_version=*/7);
  auto out = sink.Take();
  dir.InvalidateAck(a, id, out[0].txn);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].has_data);
}

TEST_F(DirectoryTest, WriteOfChunkModifiedElsewhereFlushesAndDropsTheOwnersCopy) {
  ChunkId id = MakeChunkId(a, 1);
  dir.Write(b, 3, id, 0);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_FALSE(out[0].keep_shared);
  dir.FlushReply(a, id, out[0].txn, Image("v1"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].access, sospb::EXCLUSIVE);
  EXPECT_EQ(out[0].data, "v1");
  // b now owns it: a read by a flushes from b (a kept no copy).
  dir.Read(a, 4, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, b);
}

TEST_F(DirectoryTest, ReadOfModifiedChunkLeavesOwnerAndReaderSharing) {
  ChunkId id = MakeChunkId(a, 1);
  dir.Read(b, 3, id);
  auto out = sink.Take();
  dir.FlushReply(a, id, out[0].txn, Image("v1"));
  sink.Take();
  dir.Write(c, 5, id, 0);
  out = sink.Take();
  std::set<NodeId> invalidated;
  for (auto& s : out) invalidated.insert(s.node);
  EXPECT_EQ(invalidated, (std::set<NodeId>{a, b}));
}

TEST_F(DirectoryTest, ConflictingRequestsQueueWhileOtherChunksProceed) {
  ChunkId id = MakeChunkId(a, 1);
  ChunkId other = Published(a, b, "o", 2);
  dir.Write(b, 1, id, 0);
  auto flush = sink.Take();
  ASSERT_EQ(flush.size(), 1u);
  dir.Read(c, 2, id);
  EXPECT_TRUE(sink.Take().empty()) << "a request overtook the transaction in flight";
  dir.Read(c, 3, other);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u) << "another chunk waited for this one";
  EXPECT_EQ(out[0].id, other);
  dir.FlushReply(a, id, flush[0].txn, Image("v"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, b);
  EXPECT_EQ(out[1].kind, "flush");  // c's queued read now flushes from b
  EXPECT_EQ(out[1].node, b);
  EXPECT_TRUE(out[1].keep_shared);
}

TEST_F(DirectoryTest, AnswersToTransactionsNoLongerCurrentAreIgnored) {
  ChunkId id = Published(a, b, "x");
  dir.Write(c, 1, id, 0);
  auto inv = sink.Take();
  dir.InvalidateAck(a, id, inv[0].txn + 100);
  dir.InvalidateAck(b, id, inv[0].txn + 100);
  dir.FlushReply(a, id, inv[0].txn, Image("bogus"));  // nobody asked a to flush
  EXPECT_TRUE(sink.Take().empty());
  dir.InvalidateAck(a, id, inv[0].txn);
  dir.InvalidateAck(b, id, inv[0].txn);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "x");
}

TEST_F(DirectoryTest, OwnerDeathMakesItsModifiedChunksLostForever) {
  ChunkId id = MakeChunkId(a, 1);
  dir.Write(b, 1, id, 0);
  auto out = sink.Take();
  dir.FlushReply(a, id, out[0].txn, Image("v"));
  sink.Take();  // b owns it, modified
  dir.RemoveNode(b, "died at 12:00:00 (connection reset)");
  dir.Read(c, 2, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "error");
  EXPECT_EQ(out[0].code, sospb::LOST);
  EXPECT_NE(out[0].message.find("node 2 (b)"), std::string::npos) << out[0].message;
  EXPECT_NE(out[0].message.find("died at 12:00:00"), std::string::npos) << out[0].message;
  dir.Write(a, 3, id, 0);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, sospb::LOST) << "the stale home copy was presented as current";
}

TEST_F(DirectoryTest, OwnerDeathDuringFlushFailsTheWaitingRequestAndTheQueue) {
  ChunkId id = MakeChunkId(a, 1);
  dir.Read(b, 1, id);
  dir.Read(c, 2, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  dir.RemoveNode(a, "disconnected");
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  for (auto& s : out) {
    EXPECT_EQ(s.kind, "error");
    EXPECT_EQ(s.code, sospb::LOST);
  }
}

TEST_F(DirectoryTest, SharerDeathCountsAsItsAck) {
  ChunkId id = Published(a, b, "x");
  dir.Write(c, 1, id, 0);
  auto inv = sink.Take();
  dir.InvalidateAck(a, id, inv[0].txn);
  dir.RemoveNode(b, "disconnected");
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, c);
}

TEST_F(DirectoryTest, RequesterDeathWhileWaitingLeavesTheChunkHome) {
  ChunkId id = Published(a, b, "x");
  dir.Write(c, 1, id, 0);
  auto inv = sink.Take();
  dir.RemoveNode(c, "disconnected");
  dir.InvalidateAck(a, id, inv[0].txn);
  dir.InvalidateAck(b, id, inv[0].txn);
  EXPECT_TRUE(sink.Take().empty());
  dir.Read(a, 2, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].data, "x");
}

TEST_F(DirectoryTest, ChunkOfCreatorThatDiedBeforePublishingIsLost) {
  ChunkId id = MakeChunkId(a, 1);
  dir.RemoveNode(a, "disconnected at 10:00:00");
  dir.Read(b, 1, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, sospb::LOST);
  EXPECT_NE(out[0].message.find("node 1 (a)"), std::string::npos) << out[0].message;
}

TEST_F(DirectoryTest, IdsOfNodesThatNeverExistedAreRefused) {
  dir.Read(b, 1, MakeChunkId(99, 1));
  dir.Read(b, 2, 0);
  dir.Read(b, 3, MakeChunkId(a, 0));
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 3u);
  for (auto& s : out) EXPECT_EQ(s.code, sospb::NO_SUCH_CHUNK);
}

TEST_F(DirectoryTest, CreatorWithoutTheChunkMeansNoSuchChunk) {
  ChunkId id = MakeChunkId(a, 5);
  dir.Read(b, 1, id);
  dir.Write(c, 2, id, 0);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  dir.FlushReply(a, id, out[0].txn, nullptr);
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  for (auto& s : out) EXPECT_EQ(s.code, sospb::NO_SUCH_CHUNK);
}

TEST_F(DirectoryTest, OwnerAnsweringWithoutItsCopyMakesTheChunkLost) {
  ChunkId id = Published(a, b, "x");
  dir.Write(a, 1, id, 0);
  auto inv = sink.Take();
  dir.InvalidateAck(b, id, inv[0].txn);
  sink.Take();  // a owns it
  dir.Read(c, 2, id);
  auto flush = sink.Take();
  dir.FlushReply(a, id, flush[0].txn, nullptr);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, sospb::LOST);
}

TEST_F(DirectoryTest, FreeIsRefusedWhileOthersHoldCopies) {
  ChunkId id = Published(a, b, "x");
  dir.Free(a, 1, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, sospb::IN_USE);
  EXPECT_NE(out[0].message.find("node 2 (b)"), std::string::npos);
}

TEST_F(DirectoryTest, FreedChunksStayFreed) {
  ChunkId id = MakeChunkId(a, 1);
  dir.Free(a, 1, id);  // never published: freed by its creator
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "freed");
  dir.Read(b, 2, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, sospb::FREED);
  dir.Free(a, 3, id);  // idempotent
  EXPECT_EQ(sink.Take()[0].kind, "freed");
}

TEST_F(DirectoryTest, OwnerReadingItsOwnModifiedChunkIsABadRequest) {
  ChunkId id = MakeChunkId(a, 1);
  dir.Read(a, 1, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, sospb::BAD_REQUEST);
}

TEST_F(DirectoryTest, DieFlushesEveryModifiedChunkHomeThenSaysOkToDie) {
  ChunkId unpublished = MakeChunkId(a, 1);
  ChunkId taken = MakeChunkId(b, 1);
  dir.Write(a, 1, taken, 0);
  auto f = sink.Take();
  dir.FlushReply(b, taken, f[0].txn, Image("t"));
  sink.Take();  // a owns `taken` too
  dir.Die(a, 50, {unpublished});
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  for (auto& s : out) {
    EXPECT_EQ(s.kind, "flush");
    EXPECT_EQ(s.node, a);
    EXPECT_FALSE(s.keep_shared);
  }
  dir.FlushReply(a, out[0].id, out[0].txn, Image("one"));
  EXPECT_TRUE(sink.Take().empty()) << "okToDie before every flush came back";
  dir.FlushReply(a, out[1].id, out[1].txn, Image("two"));
  auto ok = sink.Take();
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].kind, "oktodie");
  EXPECT_EQ(ok[0].seq, 50u);
  dir.RemoveNode(a, "left");
  dir.Read(c, 2, unpublished);
  dir.Read(c, 3, taken);
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  for (auto& s : out) EXPECT_EQ(s.kind, "grant") << s.message;
  // An id of the departed node that it never published does not exist.
  dir.Read(c, 4, MakeChunkId(a, 77));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, sospb::NO_SUCH_CHUNK);
}

TEST_F(DirectoryTest, DieWithNothingModifiedIsAnsweredAtOnce) {
  dir.Die(c, 9, {});
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "oktodie");
}

TEST_F(DirectoryTest, RequestsOfDeadNodesAreDroppedFromQueues) {
  ChunkId id = MakeChunkId(a, 1);
  dir.Write(b, 1, id, 0);
  auto f = sink.Take();
  dir.Read(c, 2, id);
  dir.RemoveNode(c, "disconnected");
  dir.FlushReply(a, id, f[0].txn, Image("v"));
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);  // b's grant; nothing for c
  EXPECT_EQ(out[0].node, b);
}

TEST_F(DirectoryTest, VersionsGrowWithEveryExclusiveGrant) {
  ChunkId id = Published(a, b, "x");
  dir.Write(b, 1, id, 0);
  auto inv = sink.Take();
  dir.InvalidateAck(a, id, inv[0].txn);
  EXPECT_EQ(sink.Take()[0].version, 1u);
  dir.Write(a, 2, id, 0);
  auto f = sink.Take();
  dir.FlushReply(b, id, f[0].txn, Image("y"));
  EXPECT_EQ(sink.Take()[0].version, 2u);
}

TEST_F(DirectoryTest, AnEndedProgramsChunksGoAndOtherProgramsStay) {
  ChunkId x = Published(a, b, "x", 1, /*program=*/5);
  ChunkId y = Published(a, b, "y", 2, /*program=*/6);
  EXPECT_EQ(dir.FreeProgram(5), 1u);
  EXPECT_EQ(dir.FreeProgram(5), 0u) << "a program ends once";
  EXPECT_EQ(dir.FreeProgram(0), 0u) << "0 is no program";
  dir.Read(c, 7, y);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].data, "y");
  // x is forgotten: a request goes to its creator as for a chunk never seen,
  // and whatever the creator still holds of it is not taken back in.
  dir.Read(c, 8, x);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "flush");
  dir.FlushReply(a, x, out[0].txn, Image("stale", 5));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "error");
  EXPECT_EQ(out[0].code, sospb::FREED);
  EXPECT_NE(out[0].message.find("its program 5 ended"), std::string::npos) << out[0].message;
  EXPECT_EQ(dir.Stats().dropped_with_program, 2u);
  EXPECT_EQ(dir.Stats().programs_ended, 1u);
}

TEST_F(DirectoryTest, RequestsWaitingOnAnEndedProgramsChunkFailAndLateAnswersAreIgnored) {
  ChunkId x = Published(a, b, "x", 1, /*program=*/5);
  dir.Write(c, 20, x, 0);  // invalidates a and b, then waits
  dir.Read(b, 21, x);      // queued behind it
  dir.Free(a, 22, x);      // queued too
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  const uint64_t txn = out[0].txn;
  EXPECT_EQ(dir.FreeProgram(5), 1u);
  out = sink.Take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, "error");
  EXPECT_EQ(out[0].node, c);
  EXPECT_EQ(out[0].code, sospb::FREED);
  EXPECT_EQ(out[1].kind, "error");
  EXPECT_EQ(out[1].node, b);
  EXPECT_EQ(out[2].kind, "freed");
  EXPECT_EQ(out[2].seq, 22u);
  dir.InvalidateAck(a, x, txn);
  dir.InvalidateAck(b, x, txn);
  EXPECT_TRUE(sink.Take().empty());
}

TEST_F(DirectoryTest, ALeavingNodesFlushOfAnEndedProgramsChunkIsDroppedAndItMayLeave) {
  // The launcher ends its program before it leaves: its modified chunks
  // come home with the Die, find the program ended and go.
  ChunkId unpublished = MakeChunkId(a, 1);
  ChunkId other = MakeChunkId(a, 2);
  dir.FreeProgram(5);
  dir.Die(a, 50, {unpublished, other});
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  dir.FlushReply(a, unpublished, out[0].id == unpublished ? out[0].txn : out[1].txn,
                 Image("gone", 5));
  dir.FlushReply(a, other, out[0].id == other ? out[0].txn : out[1].txn, Image("kept", 6));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "oktodie");
  dir.RemoveNode(a, "left");
  dir.Read(c, 2, unpublished);
  dir.Read(c, 3, other);
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].code, sospb::NO_SUCH_CHUNK);
  EXPECT_EQ(out[1].kind, "grant");
  EXPECT_EQ(out[1].data, "kept");
}

}  // namespace
}  // namespace sos
}  // namespace djava
