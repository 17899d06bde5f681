// The directory's coherence state machine, transition by transition: the
// seed's Table 3 (readAccess, writeAccess, invalidate, flush, die/okToDie,
// new/delete) and our additions (acknowledged invalidates, creator-held
// chunks, lost chunks, queued conflicting requests, stale answers).
#include "directory.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
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
  bool clean = false;
  sospb::ErrorCode code = sospb::ERROR_UNSPECIFIED;
  std::string message;
};

class RecordingSink : public NodeSink {
 public:
  void Grant(NodeId node, uint64_t seq, sospb::Access access, ChunkId id, uint64_t version,
             const ChunkImage* image, bool clean) override {
    Sent s{"grant", node, seq, id};
    s.access = access;
    s.clean = clean;
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
  void Declined(NodeId node, uint64_t seq, ChunkId id) override {
    sent.push_back(Sent{"declined", node, seq, id});
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

TEST_F(DirectoryTest, FirstWriteTakesOnlyAChunkNoNodeWroteSinceItsMaking) {
  constexpr uint64_t kNone = UINT64_MAX;
  ChunkId id = MakeChunkId(a, 1);  // a made it: modified there, version 0
  dir.Write(b, 7, id, kNone, Directory::kSeenAll, /*first_write=*/true);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush") << "its maker's bytes are taken";
  EXPECT_EQ(out[0].node, a);
  dir.FlushReply(a, id, out[0].txn, Image("made"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].access, sospb::EXCLUSIVE);
  EXPECT_EQ(out[0].version, 1u);
  // b writes it now: c's first write is declined, and b keeps its copy.
  dir.Write(c, 8, id, kNone, Directory::kSeenAll, /*first_write=*/true);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "declined");
  EXPECT_EQ(out[0].node, c);
  EXPECT_EQ(out[0].seq, 8u);
  EXPECT_EQ(out[0].id, id);
  // A plain write still takes it.
  dir.Write(c, 9, id, kNone);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, b);
}

TEST_F(DirectoryTest, FirstWriteIsDecidedWhenItsTurnComesNotWhenItArrives) {
  constexpr uint64_t kNone = UINT64_MAX;
  ChunkId id = MakeChunkId(a, 1);
  dir.Write(b, 7, id, kNone);  // waits for a's flush
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  dir.Write(c, 8, id, kNone, Directory::kSeenAll, /*first_write=*/true);  // queued, version 0
  EXPECT_TRUE(sink.Take().empty());
  dir.FlushReply(a, id, out[0].txn, Image("made"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, b);
  EXPECT_EQ(out[1].kind, "declined") << "b's write made the chunk b's before c's turn";
  EXPECT_EQ(out[1].node, c);
  EXPECT_EQ(dir.Stats().declined, 1u);
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

// ---- migratory sharing --------------------------------------------------------
//
// Nodes that answer the directory as clients do: a grant installs a copy, an
// invalidate drops a read copy and acks, a flush sends the node's bytes and
// keeps a read copy only when asked to. Every request a node sends is a
// transaction; a turn costs the requests it took.
class Nodes {
 public:
  enum State { kI, kS, kM };
  struct Copy {
    State state = kI;
    uint64_t version = 0;
    std::string data;
  };
  struct Count {
    int requests = 0, grants = 0, exclusive_grants = 0, flushes = 0, invalidates = 0;
  };

  Nodes(Directory* dir, RecordingSink* sink, ChunkId id) : dir_(dir), sink_(sink), id_(id) {}

  // The creator's copy, before anyone else has seen the chunk.
  void Created(NodeId node, const std::string& data) { copies_[node] = Copy{kM, 0, data}; }

  // node reads: its copy if it has one, else a Read. Returns the bytes it sees.
  std::string Read(NodeId node) {
    if (copies_[node].state == kI) {
      count_.requests++;
      dir_->Read(node, ++seq_, id_);
      Pump();
    }
    EXPECT_NE(copies_[node].state, kI) << "node " << node << " got no copy";
    return copies_[node].data;
  }

  // node writes data: in place when it holds the chunk modified, else a
  // Write (an upgrade naming its read copy's version, or a write miss).
  void Write(NodeId node, const std::string& data) {
    if (copies_[node].state != kM) {
      count_.requests++;
      dir_->Write(node, ++seq_, id_, copies_[node].state == kS ? copies_[node].version : 0);
      Pump();
    }
    ASSERT_EQ(copies_[node].state, kM) << "node " << node << " may not write";
    copies_[node].data = data;
  }

  // node drops its read copy without telling the directory (as a JVM's GC
  // does with a replica nobody uses; the directory still lists it).
  void DropReadCopy(NodeId node) {
    ASSERT_EQ(copies_[node].state, kS);
    copies_[node].state = kI;
  }

  // node writes its modified copy home unasked and keeps a read copy.
  void WriteBack(NodeId node) {
    ASSERT_EQ(copies_[node].state, kM);
    dir_->WriteBack(node, id_, Image(copies_[node].data));
    Pump();
    copies_[node].state = kS;
  }

  // At most one modified copy; no read copy beside it; every read copy
  // holds the bytes last written.
  void ExpectCoherent(const std::string& current) {
    int m = 0, s = 0;
    for (auto& [node, copy] : copies_) {
      if (copy.state == kI) continue;
      (copy.state == kM ? m : s)++;
      EXPECT_EQ(copy.data, current) << "node " << node << " holds a stale copy";
    }
    EXPECT_LE(m, 1) << "two modified copies";
    EXPECT_TRUE(m == 0 || s == 0) << "a read copy beside a modified one";
  }

  Count Take() {
    Count c = count_;
    count_ = Count();
    return c;
  }
  const Copy& copy(NodeId node) { return copies_[node]; }
  std::vector<Sent> log;  // every message the directory sent, in order

 private:
  void Pump() {
    for (;;) {
      std::vector<Sent> out = sink_->Take();
      if (out.empty()) return;
      for (const Sent& m : out) {
        log.push_back(m);
        Copy& c = copies_[m.node];
        if (m.kind == "grant") {
          count_.grants++;
          if (m.access == sospb::EXCLUSIVE) count_.exclusive_grants++;
          if (m.has_data) {
            c.data = m.data;
          } else {
            EXPECT_EQ(c.state, kS) << "a grant without bytes to a node without a copy";
          }
          c.state = m.access == sospb::EXCLUSIVE ? kM : kS;
          c.version = m.version;
        } else if (m.kind == "invalidate") {
          count_.invalidates++;
          EXPECT_NE(c.state, kM) << "a modified copy invalidated";
          c.state = kI;
          dir_->InvalidateAck(m.node, id_, m.txn);
        } else if (m.kind == "flush") {
          count_.flushes++;
          EXPECT_EQ(c.state, kM) << "node " << m.node << " flushed without a modified copy";
          c.state = m.keep_shared ? kS : kI;
          dir_->FlushReply(m.node, id_, m.txn, Image(c.data));
        }
      }
    }
  }

  Directory* dir_;
  RecordingSink* sink_;
  ChunkId id_;
  uint64_t seq_ = 1000;
  std::map<NodeId, Copy> copies_;
  Count count_;
};

// One turn of a counter updated under a lock: read it, write it plus one.
void Increment(Nodes& nodes, NodeId node) {
  const std::string v = nodes.Read(node);
  nodes.Write(node, std::to_string(std::stoi(v) + 1));
}

class MigratoryTest : public DirectoryTest {
 protected:
  ChunkId id = MakeChunkId(1, 1);  // created by a (node 1)
};

TEST_F(MigratoryTest, TwoNodesTakingTurnsToReadThenWriteCostOneTransactionATurnOnceDetected) {
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  // b's first turn: the plain protocol (a read, then an upgrade), which
  // shows the pattern: b upgrades while only a, the last writer, shares.
  Increment(nodes, b);
  Nodes::Count first = nodes.Take();
  EXPECT_EQ(first.requests, 2);
  EXPECT_EQ(first.invalidates, 1);
  EXPECT_EQ(dir.Stats().migratory_marked, 1u);
  // From then on a turn is one read miss answered with an exclusive copy.
  for (int turn = 2; turn <= 20; turn++) {
    SCOPED_TRACE("turn " + std::to_string(turn));
    Increment(nodes, turn % 2 == 0 ? a : b);
    nodes.ExpectCoherent(std::to_string(turn));
    Nodes::Count c = nodes.Take();
    EXPECT_EQ(c.requests, 1);
    EXPECT_EQ(c.grants, 1);
    EXPECT_EQ(c.exclusive_grants, 1);
    EXPECT_EQ(c.flushes, 1);
    EXPECT_EQ(c.invalidates, 0);
  }
  // Only the first flush (of b's first read) let its node keep a copy.
  for (const Sent& m : nodes.log) {
    if (m.kind != "flush") continue;
    EXPECT_EQ(m.keep_shared, &m == &nodes.log.front()) << "txn " << m.txn;
  }
  EXPECT_EQ(nodes.Read(c), "20");
  const DirectoryStats st = dir.Stats();
  EXPECT_EQ(st.migratory_grants, 20u) << "19 turns and c's read";
  EXPECT_EQ(st.migratory_undone, 0u);
}

TEST_F(MigratoryTest, WithDetectionOffEveryTurnIsAReadAndAnUpgrade) {
  RecordingSink plain_sink;
  Directory plain(&plain_sink, /*detect_migratory=*/false);
  NodeId pa = plain.AddNode("a"), pb = plain.AddNode("b");
  Nodes nodes(&plain, &plain_sink, MakeChunkId(pa, 1));
  nodes.Created(pa, "0");
  for (int turn = 1; turn <= 10; turn++) {
    SCOPED_TRACE("turn " + std::to_string(turn));
    Increment(nodes, turn % 2 == 0 ? pa : pb);
    nodes.ExpectCoherent(std::to_string(turn));
    Nodes::Count c = nodes.Take();
    EXPECT_EQ(c.requests, 2);
    EXPECT_EQ(c.grants, 2);
    EXPECT_EQ(c.exclusive_grants, 1);
    EXPECT_EQ(c.flushes, 1);
    EXPECT_EQ(c.invalidates, 1);
  }
  EXPECT_EQ(plain.Stats().migratory_marked, 0u);
  EXPECT_EQ(plain.Stats().migratory_grants, 0u);
}

TEST_F(MigratoryTest, ThreeNodesInRotationCostOneTransactionATurn) {
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  const NodeId order[] = {b, c, a};
  for (int turn = 1; turn <= 30; turn++) {
    SCOPED_TRACE("turn " + std::to_string(turn));
    Increment(nodes, order[(turn - 1) % 3]);
    nodes.ExpectCoherent(std::to_string(turn));
    Nodes::Count n = nodes.Take();
    if (turn == 1) {
      EXPECT_EQ(n.requests, 2);  // b reads a's bytes and upgrades: detected
      continue;
    }
    EXPECT_EQ(n.requests, 1);
    EXPECT_EQ(n.flushes, 1);
    EXPECT_EQ(n.exclusive_grants, 1);
    EXPECT_EQ(n.invalidates, 0);
  }
  EXPECT_EQ(dir.Stats().migratory_grants, 29u);
}

TEST_F(MigratoryTest, ReadSharedDataIsNeverMarkedMigratory) {
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "x");
  for (int turn = 0; turn < 20; turn++) {
    const NodeId reader = turn % 2 == 0 ? b : a;
    if (nodes.copy(reader).state == Nodes::kS) nodes.DropReadCopy(reader);
    EXPECT_EQ(nodes.Read(reader), "x");
    nodes.ExpectCoherent("x");
  }
  for (const Sent& m : nodes.log) {
    if (m.kind == "grant") {
      EXPECT_EQ(m.access, sospb::SHARED);
    }
  }
  EXPECT_EQ(dir.Stats().migratory_marked, 0u);
}

TEST_F(MigratoryTest, AProducerAndAConsumerAreNotMigratory) {
  // a writes, b reads, a writes again: a upgrades while b shares, but the
  // last writer is a itself.
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  for (int turn = 1; turn <= 10; turn++) {
    EXPECT_EQ(nodes.Read(b), std::to_string(turn - 1));
    nodes.Write(a, std::to_string(turn));
    nodes.ExpectCoherent(std::to_string(turn));
  }
  EXPECT_EQ(dir.Stats().migratory_marked, 0u);
  EXPECT_EQ(dir.Stats().migratory_grants, 0u);
}

TEST_F(MigratoryTest, ACopyReadExclusivelyThatComesBackUnwrittenEndsTheMark) {
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  for (int turn = 1; turn <= 4; turn++) Increment(nodes, turn % 2 == 1 ? b : a);
  ASSERT_EQ(dir.Stats().migratory_marked, 1u);
  ASSERT_EQ(nodes.copy(a).state, Nodes::kM);  // a wrote last
  nodes.Take();
  // Now they only read. b reads: exclusively still (a wrote last turn).
  EXPECT_EQ(nodes.Read(b), "4");
  EXPECT_EQ(nodes.copy(b).state, Nodes::kM);
  // a reads: b is flushed (without keeping a copy, as decided when the flush
  // was sent), its bytes are the ones it was granted: a gets a read copy.
  nodes.log.clear();
  EXPECT_EQ(nodes.Read(a), "4");
  ASSERT_EQ(nodes.log.size(), 2u);
  EXPECT_EQ(nodes.log[0].kind, "flush");
  EXPECT_FALSE(nodes.log[0].keep_shared);
  EXPECT_EQ(nodes.log[1].kind, "grant");
  EXPECT_EQ(nodes.log[1].access, sospb::SHARED);
  EXPECT_EQ(nodes.copy(b).state, Nodes::kI);
  EXPECT_EQ(dir.Stats().migratory_undone, 1u);
  nodes.ExpectCoherent("4");
  // The one extra transaction: b, which lost its copy, misses once more,
  // and is served from home. From then on reads cost what they always did.
  nodes.Take();
  EXPECT_EQ(nodes.Read(b), "4");
  Nodes::Count n = nodes.Take();
  EXPECT_EQ(n.requests, 1);
  EXPECT_EQ(n.flushes, 0);
  for (int turn = 0; turn < 10; turn++) {
    const NodeId reader = turn % 2 == 0 ? b : a;
    nodes.DropReadCopy(reader);
    nodes.log.clear();
    EXPECT_EQ(nodes.Read(reader), "4");
    ASSERT_EQ(nodes.log.size(), 1u);
    EXPECT_EQ(nodes.log[0].access, sospb::SHARED);
  }
  EXPECT_EQ(nodes.Take().flushes, 0);
  EXPECT_EQ(dir.Stats().migratory_grants, 4u) << "turns 2 to 4 and b's first read";
  // Written in turns again, it is found migratory again.
  nodes.ExpectCoherent("4");
  Increment(nodes, b);  // b holds a read copy: an upgrade invalidating a
  EXPECT_EQ(dir.Stats().migratory_marked, 1u) << "the last holder, b, never wrote";
  Increment(nodes, a);  // a reads (b keeps a copy), upgrades: b was the last writer
  EXPECT_EQ(dir.Stats().migratory_marked, 2u);
  nodes.Take();
  Increment(nodes, b);
  EXPECT_EQ(nodes.Take().requests, 1);
  nodes.ExpectCoherent("7");
}

TEST_F(MigratoryTest, AWriterFlushingAnUnwrittenReadExclusiveCopyEndsTheMarkToo) {
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  Increment(nodes, b);  // detected
  EXPECT_EQ(nodes.Read(a), "1");  // exclusive, not written
  ASSERT_EQ(nodes.copy(a).state, Nodes::kM);
  nodes.Write(c, "9");
  EXPECT_EQ(dir.Stats().migratory_undone, 1u);
  nodes.ExpectCoherent("9");
  nodes.log.clear();
  EXPECT_EQ(nodes.Read(a), "9");
  EXPECT_EQ(nodes.log.back().access, sospb::SHARED) << "still migratory";
}

TEST_F(MigratoryTest, AnUnwrittenWriteBackEndsTheMarkAndAWrittenOneKeepsIt) {
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  Increment(nodes, b);
  Increment(nodes, a);  // a holds it modified, from a read, and wrote it
  nodes.WriteBack(a);
  EXPECT_EQ(dir.Stats().migratory_undone, 0u);
  nodes.ExpectCoherent("2");
  Increment(nodes, b);  // a shares it: plain read, then an upgrade
  EXPECT_EQ(nodes.Read(a), "3");
  ASSERT_EQ(nodes.copy(a).state, Nodes::kM) << "the write-back ended the mark";
  nodes.WriteBack(a);  // unwritten
  EXPECT_EQ(dir.Stats().migratory_undone, 1u);
  nodes.ExpectCoherent("3");
  // Not migratory: b's turn is a read and an upgrade, and so is a's.
  Increment(nodes, b);
  nodes.Take();
  Increment(nodes, c);
  EXPECT_EQ(nodes.Take().requests, 2) << "still migratory";
  nodes.ExpectCoherent("5");
}

TEST_F(MigratoryTest, AMigratoryChunkAtHomeWithNoOtherSharerIsReadExclusively) {
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  Increment(nodes, b);
  Increment(nodes, a);  // a holds it modified, from a read
  // a leaves: its copy comes home; nobody shares it.
  dir.Die(a, 77, {});
  std::vector<Sent> out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "flush");
  EXPECT_FALSE(out[0].keep_shared);
  dir.FlushReply(a, id, out[0].txn, Image("2"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "oktodie");
  dir.RemoveNode(a, "left");
  dir.Read(c, 5, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u) << "no flush, no invalidate: granted from home";
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].access, sospb::EXCLUSIVE);
  EXPECT_TRUE(out[0].has_data);
  EXPECT_EQ(out[0].data, "2");
}

TEST_F(MigratoryTest, AReadStillUnderWayWhenItsNodeLeavesIsNotGranted) {
  // A prefetch does not wait for its grants, so a node may send its Die
  // with a read still under way. A migratory read is granted exclusively:
  // granted after the Die's reclaims, the chunk would leave with the node
  // and be LOST to everyone else (pytest test_sos_stress with --migratory).
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  Increment(nodes, b);
  Increment(nodes, a);  // migratory, and modified at a
  ASSERT_EQ(nodes.copy(a).state, Nodes::kM);
  dir.Read(c, 9, id);  // c's read: a is flushed for it
  std::vector<Sent> out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "flush");
  const uint64_t txn = out[0].txn;
  dir.Die(c, 10, {});  // c owns nothing yet: it may go at once
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "oktodie");
  dir.FlushReply(a, id, txn, Image("2"));
  EXPECT_TRUE(sink.Take().empty()) << "nothing granted to a node that is leaving";
  dir.RemoveNode(c, "left");
  dir.Read(b, 11, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u) << "served from home";
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_TRUE(out[0].has_data);
  EXPECT_EQ(out[0].data, "2");
}

TEST_F(MigratoryTest, AReadOfAMigratoryChunkAnotherNodeSharesIsShared) {
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  Increment(nodes, b);
  Increment(nodes, a);
  nodes.WriteBack(a);  // a keeps a read copy at home
  nodes.log.clear();
  EXPECT_EQ(nodes.Read(c), "2");
  ASSERT_EQ(nodes.log.size(), 1u);
  EXPECT_EQ(nodes.log[0].access, sospb::SHARED) << "a's read copy would be stale";
  nodes.ExpectCoherent("2");
}

TEST_F(MigratoryTest, AReaderTheDirectoryStillListsGetsTheBytes) {
  // b dropped its read copy without a word; the directory still lists it
  // as the only sharer, and b's read then gets an exclusive copy: with the
  // bytes, for b has none.
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  Increment(nodes, b);
  Increment(nodes, a);
  Increment(nodes, b);
  nodes.WriteBack(b);
  nodes.DropReadCopy(b);
  nodes.log.clear();
  EXPECT_EQ(nodes.Read(b), "3");
  ASSERT_EQ(nodes.log.size(), 1u);
  EXPECT_EQ(nodes.log[0].access, sospb::EXCLUSIVE);
  EXPECT_TRUE(nodes.log[0].has_data);
}

TEST_F(MigratoryTest, AnOwnerThatDiesDuringAMigratoryFlushLosesTheChunkAsBefore) {
  Nodes nodes(&dir, &sink, id);
  nodes.Created(a, "0");
  Increment(nodes, b);
  Increment(nodes, a);  // a holds it modified
  sink.Take();
  dir.Read(c, 5, id);
  dir.Read(b, 6, id);  // queued behind c's
  std::vector<Sent> out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, a);
  EXPECT_FALSE(out[0].keep_shared) << "migratory: c is to get the only copy";
  dir.RemoveNode(a, "died at 12:00:00");
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  for (const Sent& m : out) {
    EXPECT_EQ(m.kind, "error");
    EXPECT_EQ(m.code, sospb::LOST);
    EXPECT_NE(m.message.find("node 1 (a)"), std::string::npos) << m.message;
  }
  dir.FlushReply(a, id, 1, Image("late"));  // ignored
  dir.Read(c, 7, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, sospb::LOST);
  EXPECT_EQ(dir.Stats().migratory_grants, 1u) << "a's, before it died";
}

// ---- data following its lock (Directory::Push) ----------------------------------

class PushTest : public DirectoryTest {
 protected:
  // A chunk b holds modified (it wrote "v" after a made it).
  ChunkId ModifiedAtB() {
    ChunkId id = MakeChunkId(a, 1);
    dir.Write(b, 1, id, 0);
    auto out = sink.Take();
    dir.FlushReply(a, id, out[0].txn, Image("v"));
    sink.Take();
    return id;
  }
  // b writes chunk id, which a made (of `program`): b holds it modified.
  void WrittenAtB(ChunkId id, uint64_t program = 0) {
    dir.Write(b, 1, id, 0);
    auto out = sink.Take();
    ASSERT_EQ(out.size(), 1u);
    dir.FlushReply(a, id, out[0].txn, Image("d", program));
    sink.Take();
  }
  // b held chunk *id modified, and a push moved it to c with b's bytes "w":
  // c's grant.
  Sent PushedToC(ChunkId* id) {
    *id = ModifiedAtB();
    EXPECT_TRUE(dir.Push(*id, b, c, CountSent()));
    auto out = sink.Take();
    dir.FlushReply(b, *id, out[0].txn, Image("w"));
    out = sink.Take();
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? Sent{} : out[0];
  }
  int sent_calls = 0;
  std::function<void()> CountSent() {
    return [this] { sent_calls++; };
  }
};

TEST_F(PushTest, AModifiedCopyMovesToTheNextOwnerBeforeItsLockIsSent) {
  ChunkId id = ModifiedAtB();
  ASSERT_TRUE(dir.Push(id, b, c, CountSent()));
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, b);
  EXPECT_FALSE(out[0].keep_shared) << "the next owner gets the only copy";
  EXPECT_EQ(sent_calls, 0) << "the lock waits for the data";
  dir.FlushReply(b, id, out[0].txn, Image("w"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, c);
  EXPECT_EQ(out[0].access, sospb::EXCLUSIVE);
  EXPECT_TRUE(out[0].has_data);
  EXPECT_EQ(out[0].data, "w");
  EXPECT_EQ(sent_calls, 1);
  EXPECT_TRUE(dir.Holds(c, id)) << "the grant is a shipment like any other";
  // c's own read, sent before the grant reached it, is answered by it.
  dir.Read(c, 9, id);
  EXPECT_TRUE(sink.Take().empty());
  EXPECT_EQ(dir.Stats().push_crossings, 1u);
  // The chunk goes on as usual: a's read flushes c.
  dir.Read(a, 10, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, c);
  dir.FlushReply(c, id, out[0].txn, Image("x"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "x");
  EXPECT_EQ(dir.Stats().pushes, 1u);
}

TEST_F(PushTest, AWriteBackWithDropCrossingAReadsFlushLeavesNoSharer) {
  // a made the chunk (version 0, never granted) and wrote it home with
  // drop just as b's read flushed it: the write-back answers the flush,
  // but a keeps no copy, whatever the flush said. Listed as a sharer, a's
  // next write (naming no version, which reads as 0) would be granted
  // without bytes it does not have.
  ChunkId id = MakeChunkId(a, 7);
  dir.Read(b, 1, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "flush");
  EXPECT_TRUE(out[0].keep_shared);
  dir.WriteBack(a, id, Image("v"), /*drop=*/true);
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);  // the write-back superseded, b's grant
  EXPECT_EQ(out[1].kind, "grant");
  dir.Write(a, 2, id, 0);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "invalidate");  // b's read copy
  dir.InvalidateAck(b, id, out[0].txn);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_TRUE(out[0].has_data) << "a has no copy";
  EXPECT_EQ(out[0].data, "v");
}

TEST_F(PushTest, APushedGrantIsCleanUntilItsOwnerSaysOtherwise) {
  // The push grants c the home copy as it is: clean. c's answer to a's
  // read without bytes means c never wrote it, and a gets the home copy.
  ChunkId id;
  EXPECT_TRUE(PushedToC(&id).clean);
  dir.Read(a, 10, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "flush");
  dir.FlushReply(c, id, out[0].txn, nullptr);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].data, "w");
  EXPECT_EQ(dir.Stats().clean_returns, 1u);
  EXPECT_EQ(dir.Stats().lost, 0u);
  // A write's grant is not clean: an answer without bytes from its owner
  // still means the chunk is lost.
  dir.Write(b, 11, id, 0);
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);  // a's read copy, and c's, which it kept
  for (const auto& m : out) {
    ASSERT_EQ(m.kind, "invalidate");
    dir.InvalidateAck(m.node, id, m.txn);
  }
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "grant");
  EXPECT_FALSE(out[0].clean);
  dir.Read(c, 12, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "flush");
  dir.FlushReply(b, id, out[0].txn, nullptr);
  EXPECT_EQ(dir.Stats().lost, 1u);
}

TEST_F(PushTest, ACleanGrantDiesWithItsOwner) {
  // c dies holding a clean grant: it may have written since (only c knew),
  // so the chunk is lost, as any chunk its dead owner held; never the home
  // copy presented as current.
  ChunkId id;
  PushedToC(&id);
  dir.RemoveNode(c, "gone");
  EXPECT_EQ(dir.Stats().lost, 1u);
  dir.Read(a, 10, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "error");
  EXPECT_EQ(out[0].code, sospb::LOST);
}

TEST_F(PushTest, ARequestThePushAnsweredIsDroppedAfterTheChunkMovedOn) {
  // c's write is on its way when the push reaches c, and a's write takes
  // the chunk from c before c's arrives; c's is then served (c gets the
  // chunk again, unasked by then). c's next write, sent having seen only
  // the push's version, is answered by that grant: dropped, not refused.
  ChunkId id = ModifiedAtB();
  ASSERT_TRUE(dir.Push(id, b, c, CountSent()));
  auto out = sink.Take();
  dir.FlushReply(b, id, out[0].txn, Image("w"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  const uint64_t pushed = out[0].version;
  dir.Write(a, 10, id, 0, 0);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "flush");
  ASSERT_EQ(out[0].node, c);
  dir.Write(c, 9, id, 0, /*seen_version=*/0);  // sent before the push reached c
  dir.FlushReply(c, id, out[0].txn, Image("x"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, a);
  EXPECT_EQ(out[1].kind, "flush") << "c's request is served in its turn";
  dir.FlushReply(a, id, out[1].txn, Image("y"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, c);
  // c lost the pushed copy to a and asks again before this grant reaches it.
  dir.Write(c, 11, id, 0, pushed);
  EXPECT_TRUE(sink.Take().empty()) << "answered by the grant on its way";
  // Asking again having seen that grant is c's error.
  dir.Write(c, 12, id, 0, out[0].version);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "error");
}

TEST_F(PushTest, NothingMovesUnlessTheReleasingNodeHoldsItModifiedAndIdle) {
  ChunkId home = Published(a, b, "x");
  EXPECT_FALSE(dir.Push(home, a, c, CountSent())) << "at home";
  ChunkId id = ModifiedAtB();
  EXPECT_FALSE(dir.Push(id, a, c, CountSent())) << "a is not its owner";
  EXPECT_FALSE(dir.Push(id, b, b, CountSent())) << "to its owner";
  EXPECT_FALSE(dir.Push(MakeChunkId(a, 77), b, c, CountSent())) << "unknown to the directory";
  dir.Read(a, 3, id);  // a flush of b under way
  sink.Take();
  EXPECT_FALSE(dir.Push(id, b, c, CountSent())) << "a request under way";
  EXPECT_EQ(sent_calls, 0);
  EXPECT_TRUE(sink.Take().empty());
}

TEST_F(PushTest, AnOwnerDyingDuringThePushLosesTheChunkAndStillLetsTheLockGo) {
  ChunkId id = ModifiedAtB();
  ASSERT_TRUE(dir.Push(id, b, c, CountSent()));
  sink.Take();
  dir.RemoveNode(b, "died");
  EXPECT_EQ(sent_calls, 1);
  EXPECT_TRUE(sink.Take().empty()) << "nobody asked: nobody is told";
  dir.Read(c, 4, id);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, sospb::LOST);
}

TEST_F(PushTest, ATargetThatLeftGetsNothingAndTheChunkStaysHome) {
  ChunkId id = ModifiedAtB();
  ASSERT_TRUE(dir.Push(id, b, c, CountSent()));
  auto out = sink.Take();
  dir.RemoveNode(c, "left");
  dir.FlushReply(b, id, out[0].txn, Image("w"));
  EXPECT_TRUE(sink.Take().empty());
  EXPECT_EQ(sent_calls, 1);
  dir.Read(a, 5, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].data, "w");
}

TEST_F(PushTest, RequestsQueuedBehindThePushAreServedAfterIt) {
  ChunkId id = ModifiedAtB();
  ASSERT_TRUE(dir.Push(id, b, c, CountSent()));
  auto out = sink.Take();
  dir.Write(a, 6, id, 0);  // queues behind the push
  EXPECT_TRUE(sink.Take().empty());
  dir.FlushReply(b, id, out[0].txn, Image("w"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, c);
  EXPECT_EQ(out[1].kind, "flush") << "a's write revokes c's pushed copy";
  EXPECT_EQ(out[1].node, c);
  EXPECT_EQ(sent_calls, 1);
}

TEST_F(PushTest, ACopyMovedAndNeverTouchedEndsTheMovesUntilANodeAsksForIt) {
  ChunkId id = ModifiedAtB();
  ASSERT_TRUE(dir.Push(id, b, c, CountSent()));
  auto out = sink.Take();
  dir.FlushReply(b, id, out[0].txn, Image("w"));
  sink.Take();  // c's grant
  // c's thread held the lock without touching the object: its copy goes
  // back unused, and the next hand-off leaves it where it is.
  ASSERT_TRUE(dir.Push(id, c, a, CountSent()));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  dir.FlushReply(c, id, out[0].txn, Image("w"), /*unused=*/true);
  sink.Take();  // a's grant
  EXPECT_EQ(dir.Stats().pushes_unused, 1u);
  EXPECT_FALSE(dir.Push(id, a, b, CountSent())) << "a lock whose holders leave its object alone";
  EXPECT_TRUE(sink.Take().empty());
  // b reads the object: moving it may pay again.
  dir.Read(b, 7, id);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  dir.FlushReply(a, id, out[0].txn, Image("w"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  const bool exclusive = out[0].access == sospb::EXCLUSIVE;
  if (!exclusive) {
    dir.Write(b, 8, id, out[0].version);
    for (const Sent& m : sink.Take())
      if (m.kind == "invalidate") dir.InvalidateAck(m.node, id, m.txn);
  }
  sink.Take();  // b's write grant
  EXPECT_TRUE(dir.Push(id, b, c, CountSent()));
  EXPECT_EQ(sent_calls, 2);
}

TEST_F(PushTest, WhatTheHolderWasGrantedUnderTheLockMovesWithIt) {
  // A lock object at home (read-shared) and data b took while holding it.
  ChunkId lock = Published(a, c, "lock", 1);
  ChunkId before = MakeChunkId(a, 2), data1 = MakeChunkId(a, 3), data2 = MakeChunkId(a, 4);
  WrittenAtB(before);  // before b's thread got the lock
  const uint64_t mark = dir.ExclusiveMark(b);
  WrittenAtB(data1);
  WrittenAtB(data2);
  ASSERT_TRUE(dir.PushWithLock(lock, b, c, mark, 0, CountSent()));
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 2u) << "the lock's own chunk is home: the two data chunks move";
  std::set<ChunkId> flushed;
  for (const Sent& m : out) {
    EXPECT_EQ(m.kind, "flush");
    EXPECT_EQ(m.node, b);
    flushed.insert(m.id);
  }
  EXPECT_EQ(flushed, (std::set<ChunkId>{data1, data2}));
  dir.FlushReply(b, out[0].id, out[0].txn, Image("x"));
  EXPECT_EQ(sent_calls, 0) << "the lock waits for all its data";
  dir.FlushReply(b, out[1].id, out[1].txn, Image("y"));
  EXPECT_EQ(sent_calls, 1);
  EXPECT_EQ(sink.Take().size(), 2u) << "two grants to c";
  EXPECT_FALSE(dir.PushWithLock(lock, b, c, Directory::kNoMark, 0, CountSent()))
      << "nothing of b's left to move";
}

TEST_F(PushTest, WhatCameAlongToTheHolderStaysWhenItsLockMovesOn) {
  // c reads x, which b holds modified, and b's reply sends y (b made it)
  // along: c holds y by a clean grant. A consumer's node gets the queue
  // entries it takes that way, and mostly only reads them: moving them on
  // with c's next lock would hand every one to the producer, which holds
  // them until a read elsewhere takes them back (never, once consumed).
  ChunkId lock = Published(a, c, "lock", 1);
  ChunkId x = MakeChunkId(a, 2), y = MakeChunkId(b, 9);
  WrittenAtB(x);
  const uint64_t mark = dir.ExclusiveMark(c);
  dir.Read(c, 5, x);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "flush");
  dir.WriteBack(b, y, Image("y"), /*drop=*/true);
  ASSERT_EQ(sink.Take().size(), 1u);  // written back
  dir.FlushReply(b, x, out[0].txn, Image("x"), /*unused=*/false, {y});
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].kind, "grant");
  EXPECT_EQ(out[1].id, y);
  EXPECT_TRUE(out[1].clean);
  EXPECT_EQ(dir.ExclusiveMark(c), mark) << "a grant along is not logged as written";
  EXPECT_FALSE(dir.PushWithLock(lock, c, a, mark, 0, CountSent()))
      << "nothing c wrote under the lock";
  EXPECT_TRUE(sink.Take().empty());
}

// ---- data leaves with the release (WriteBack with drop) -------------------------

TEST_F(PushTest, WhatTheReleaserWroteHomeAndDroppedIsGrantedWithNoFlush) {
  ChunkId lock = Published(a, c, "lock", 1);
  ChunkId data = MakeChunkId(a, 2), fresh = MakeChunkId(b, 9);
  WrittenAtB(data);
  // b's release: data, and an object b made under the lock (never asked
  // for, so not in the directory yet), go home dropped ...
  dir.WriteBack(b, data, Image("w"), /*drop=*/true);
  dir.WriteBack(b, fresh, Image("n"), /*drop=*/true);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  for (const Sent& m : out) {
    EXPECT_EQ(m.kind, "writtenback");
    EXPECT_TRUE(m.has_data) << "accepted";
  }
  // ... and the release names them: c is granted both at once.
  ASSERT_TRUE(dir.PushWithLock(lock, b, c, Directory::kNoMark, 0, CountSent(), {data, fresh}));
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u) << "two grants, no flush";
  std::set<ChunkId> granted;
  for (const Sent& m : out) {
    EXPECT_EQ(m.kind, "grant");
    EXPECT_EQ(m.node, c);
    EXPECT_EQ(m.access, sospb::EXCLUSIVE);
    EXPECT_TRUE(m.has_data);
    granted.insert(m.id);
  }
  EXPECT_EQ(granted, (std::set<ChunkId>{data, fresh}));
  EXPECT_EQ(sent_calls, 1) << "the lock goes at once";
  EXPECT_EQ(dir.Stats().pushes_released, 2u);
  EXPECT_EQ(dir.Stats().released_with_lock, 2u);
  // c owns them now: a's read flushes c, and b (which kept no copy) is
  // asked nothing.
  dir.Read(a, 10, data);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, c);
  dir.FlushReply(c, data, out[0].txn, Image("x"));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "x");
}

TEST_F(PushTest, AReleaseToItsOwnNodeTakesBackOnlyWhatItWroteHome) {
  // b handed its data over for another node, but a thread of b is next (a
  // woken waiter there): what b dropped goes back to it with the lock, and
  // nothing else is asked of b, which holds the rest.
  ChunkId lock = Published(a, c, "lock", 1);
  ChunkId data = MakeChunkId(a, 2), kept = MakeChunkId(a, 3);
  const uint64_t mark = dir.ExclusiveMark(b);
  WrittenAtB(data);
  WrittenAtB(kept);  // taken under the lock too, not handed over
  EXPECT_FALSE(dir.PushWithLock(lock, b, b, mark, 0, CountSent()))
      << "nothing written home: nothing to move";
  EXPECT_TRUE(sink.Take().empty());
  dir.WriteBack(b, data, Image("w"), /*drop=*/true);
  sink.Take();
  ASSERT_TRUE(dir.PushWithLock(lock, b, b, mark, 0, CountSent(), {data}));
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u) << "one grant, no flush";
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, b);
  EXPECT_EQ(out[0].id, data);
  EXPECT_EQ(out[0].access, sospb::EXCLUSIVE);
  EXPECT_EQ(out[0].data, "w");
  EXPECT_TRUE(out[0].clean) << "unasked, so read as S until written";
  EXPECT_EQ(sent_calls, 1);
  // b owns it again: a's read flushes b.
  dir.Read(a, 10, data);
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, b);
}

TEST_F(PushTest, AReleaseToItsOwnNodeThatOvertakesItsWriteBackWaitsForIt) {
  ChunkId lock = Published(a, c, "lock", 1);
  ChunkId data = MakeChunkId(a, 2);
  WrittenAtB(data);
  // The release names data before its write-back reached the directory.
  ASSERT_TRUE(dir.PushWithLock(lock, b, b, Directory::kNoMark, 0, CountSent(), {data}));
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, b);
  const uint64_t txn = out[0].txn;
  EXPECT_EQ(sent_calls, 0) << "the lock waits";
  // The write-back crossing the flush answers it: b gets its bytes back.
  dir.WriteBack(b, data, Image("w"), /*drop=*/true);
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, "writtenback");
  EXPECT_FALSE(out[0].has_data) << "not accepted: it answered the flush";
  EXPECT_EQ(out[1].kind, "grant");
  EXPECT_EQ(out[1].node, b);
  EXPECT_EQ(out[1].data, "w");
  EXPECT_EQ(sent_calls, 1);
  dir.FlushReply(b, data, txn, nullptr);  // b's reply, without bytes: ignored
  EXPECT_TRUE(sink.Take().empty());
  EXPECT_EQ(dir.Stats().lost, 0u);
}

TEST_F(PushTest, AReleasedCopySomebodyAskedForMeanwhileStaysWithItsRequests) {
  ChunkId lock = Published(a, c, "lock", 1);
  ChunkId data = MakeChunkId(a, 2), other = MakeChunkId(a, 3);
  WrittenAtB(data);
  WrittenAtB(other);
  dir.WriteBack(b, data, Image("w"), /*drop=*/true);
  dir.WriteBack(b, other, Image("o"), /*drop=*/false);  // b keeps a read copy: not released
  sink.Take();
  dir.Read(a, 5, data);  // served from home: a shares it now
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  EXPECT_EQ(out[0].node, a);
  EXPECT_FALSE(dir.PushWithLock(lock, b, c, Directory::kNoMark, 0, CountSent(), {data, other}));
  EXPECT_TRUE(sink.Take().empty());
  EXPECT_EQ(sent_calls, 0);
  // Only the node that dropped it releases it.
  ChunkId third = MakeChunkId(a, 4);
  WrittenAtB(third);
  dir.WriteBack(b, third, Image("t"), /*drop=*/true);
  sink.Take();
  EXPECT_FALSE(dir.PushWithLock(lock, a, c, Directory::kNoMark, 0, CountSent(), {third}));
  EXPECT_TRUE(sink.Take().empty());
}

TEST_F(PushTest, AReleaseThatOvertakesItsWriteBackWaitsForIt) {
  // The release reaches the service before b's write-back reaches the
  // directory (two connections): the push asks b, and the write-back that
  // crosses the flush is its answer (b's reply, without bytes, is ignored).
  ChunkId lock = Published(a, c, "lock", 1);
  ChunkId data = MakeChunkId(a, 2);
  WrittenAtB(data);
  ASSERT_TRUE(dir.PushWithLock(lock, b, c, Directory::kNoMark, 0, CountSent(), {data}));
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  const uint64_t txn = out[0].txn;
  dir.WriteBack(b, data, Image("w"), /*drop=*/true);
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, "writtenback");
  EXPECT_EQ(out[1].kind, "grant");
  EXPECT_EQ(out[1].node, c);
  EXPECT_EQ(out[1].data, "w");
  EXPECT_EQ(sent_calls, 1);
  dir.FlushReply(b, data, txn, nullptr);  // b's reply: stale, ignored
  EXPECT_TRUE(sink.Take().empty());
  EXPECT_EQ(dir.Stats().lost, 0u);
}

TEST_F(PushTest, OnlyTheLocksProgramsDataMovesWithIt) {
  // b runs threads of two programs: while one of program 5 held the lock,
  // one of program 6 wrote too. c's thread (program 5's) gets the lock and
  // program 5's data; program 6's stays on b, where its threads run.
  ChunkId lock = Published(a, c, "lock", 1, /*program=*/5);
  ChunkId mine = MakeChunkId(a, 2), theirs = MakeChunkId(a, 3);
  const uint64_t mark = dir.ExclusiveMark(b);
  WrittenAtB(mine, 5);
  WrittenAtB(theirs, 6);
  ASSERT_TRUE(dir.PushWithLock(lock, b, c, mark, 0, CountSent()));
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u) << "program 6's chunk stays where its threads run";
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].id, mine);
  dir.FlushReply(b, mine, out[0].txn, Image("x", 5));
  EXPECT_EQ(sent_calls, 1);
  EXPECT_EQ(sink.Take().size(), 1u) << "the grant to c";
  // The other program's data still moves with a lock of its own.
  ChunkId their_lock = Published(a, c, "lock", 4, /*program=*/6);
  ASSERT_TRUE(dir.PushWithLock(their_lock, b, c, mark, 0, CountSent()));
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, theirs);
}

TEST_F(PushTest, ALockNeverImagedIsItsHoldersProgram) {
  // A lock used only as a monitor (no image: the directory does not know
  // its program). Its next holder's thread is program 5's: program 6's
  // data, which b wrote meanwhile, stays on b.
  ChunkId lock = MakeChunkId(a, 1);
  ChunkId mine = MakeChunkId(a, 2), theirs = MakeChunkId(a, 3);
  const uint64_t mark = dir.ExclusiveMark(b);
  WrittenAtB(mine, 5);
  WrittenAtB(theirs, 6);
  ASSERT_TRUE(dir.PushWithLock(lock, b, c, mark, /*holder_program=*/5, CountSent()));
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u) << "program 6's chunk stays where its threads run";
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].id, mine);
}

TEST_F(PushTest, ANamedChunkNeverMoves) {
  // A class's statics (a named chunk), written by b while its thread held
  // the class's lock: their image names no class, so no node could tell
  // their program, and they stay where they are.
  ChunkId statics = MakeChunkId(kNamedNode, 7);
  dir.Write(b, 1, statics, 0);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "grant");
  EXPECT_FALSE(dir.PushWithLock(statics, b, c, Directory::kNoMark, 5, CountSent()));
  EXPECT_TRUE(sink.Take().empty());
  EXPECT_FALSE(dir.Push(statics, b, c, CountSent()));
}

TEST_F(PushTest, AnEndedProgramsChunkIsDroppedAndTheLockStillGoes) {
  ChunkId id = MakeChunkId(a, 1);
  dir.Write(b, 1, id, 0);
  auto out = sink.Take();
  dir.FlushReply(a, id, out[0].txn, Image("v", 42));
  sink.Take();
  ASSERT_TRUE(dir.Push(id, b, c, CountSent()));
  out = sink.Take();
  dir.FreeProgram(42);
  EXPECT_EQ(sent_calls, 1);
  dir.FlushReply(b, id, out[0].txn, Image("w", 42));  // late: ignored
  EXPECT_EQ(sent_calls, 1);
}

}  // namespace
}  // namespace sos
}  // namespace djava
