// The directory's distributed garbage collector: reference listing (holds
// counted per shipment, released by count) and the trace from holds, named
// chunks and requests under way through home bytes and block runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "directory.h"

namespace djava {
namespace sos {
namespace {

struct Sent {
  std::string kind;
  NodeId node = 0;
  ChunkId id = 0;
  uint64_t txn = 0;
  sospb::ErrorCode code = sospb::ERROR_UNSPECIFIED;
  std::string message;
  std::vector<ChunkId> refs;  // a grant's, when it carries bytes
};

class Sink : public NodeSink {
 public:
  void Grant(NodeId node, uint64_t, sospb::Access, ChunkId id, uint64_t,
             const ChunkImage* image, bool) override {
    Sent s{"grant", node, id};
    if (image != nullptr) s.refs = image->refs;
    sent.push_back(s);
  }
  void Invalidate(NodeId node, ChunkId id, uint64_t txn) override {
    sent.push_back(Sent{"invalidate", node, id, txn});
  }
  void Flush(NodeId node, ChunkId id, uint64_t txn, bool) override {
    sent.push_back(Sent{"flush", node, id, txn});
  }
  void Error(NodeId node, uint64_t, ChunkId id, sospb::ErrorCode code,
             const std::string& message) override {
    Sent s{"error", node, id};
    s.code = code;
    s.message = message;
    sent.push_back(s);
  }
  void Freed(NodeId node, uint64_t, ChunkId id) override { sent.push_back(Sent{"freed", node, id}); }
  void Declined(NodeId node, uint64_t, ChunkId id) override {
    sent.push_back(Sent{"declined", node, id});
  }
  void OkToDie(NodeId node, uint64_t) override { sent.push_back(Sent{"oktodie", node, 0}); }
  void WrittenBack(NodeId node, ChunkId id, bool accepted) override {
    sent.push_back(Sent{accepted ? "writtenback" : "superseded", node, id});
  }

  std::vector<Sent> Take() {
    std::vector<Sent> out;
    out.swap(sent);
    return out;
  }
  std::vector<Sent> sent;
};

std::unique_ptr<ChunkImage> Image(std::vector<ChunkId> refs = {},
                                  std::vector<std::pair<ChunkId, uint32_t>> runs = {}) {
  auto i = std::make_unique<ChunkImage>();
  i->class_index = 7;
  i->data = "bytes";
  i->refs = std::move(refs);
  i->runs = std::move(runs);
  return i;
}

class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a = dir.AddNode("a");
    b = dir.AddNode("b");
    c = dir.AddNode("c");
    dir.SetClassNamer([](uint32_t index) { return "Class" + std::to_string(index); });
  }

  // `reader` reads a chunk `creator` made, whose bytes name refs: after
  // this the creator holds it (one shipment: its making), the reader holds
  // it and each of refs (one shipment each), and it is at home.
  ChunkId Fetched(NodeId creator, uint64_t seq_no, NodeId reader, std::vector<ChunkId> refs = {},
                  std::vector<std::pair<ChunkId, uint32_t>> runs = {}) {
    const ChunkId id = MakeChunkId(creator, seq_no);
    dir.Read(reader, 1, id);
    auto out = sink.Take();
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].kind, "flush");
    dir.FlushReply(creator, id, out[0].txn, Image(std::move(refs), std::move(runs)));
    out = sink.Take();
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].kind, "grant");
    return id;
  }

  // writer, a sharer of x, writes it (invalidating reader, the other
  // sharer), then reader reads it back: x's home bytes name refs then.
  void Rewrite(NodeId writer, NodeId reader, ChunkId x, std::vector<ChunkId> refs) {
    dir.Write(writer, 2, x, 0);
    auto out = sink.Take();
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].kind, "invalidate");
    dir.InvalidateAck(reader, x, out[0].txn);
    sink.Take();
    dir.Read(reader, 3, x);
    out = sink.Take();
    ASSERT_EQ(out[0].kind, "flush");
    dir.FlushReply(writer, x, out[0].txn, Image(std::move(refs)));
    sink.Take();
  }

  void Release(NodeId node, ChunkId id, uint64_t shipments) {
    dir.Release(node, {id}, {shipments});
  }

  // Whether the directory still serves id: a read by c is granted (or
  // waits on a flush), not refused as collected.
  bool Alive(ChunkId id) {
    dir.Read(c, 9, id);
    auto out = sink.Take();
    EXPECT_FALSE(out.empty());
    if (out.empty()) return false;
    if (out[0].kind == "error") {
      EXPECT_EQ(out[0].code, sospb::FREED) << out[0].message;
      return false;
    }
    // Take back what the read shipped, so that it does not keep id alive.
    dir.Release(c, {id}, {1});
    for (ChunkId ref : out[0].refs) dir.Release(c, {ref}, {1});
    return true;
  }

  Sink sink;
  Directory dir{&sink};
  NodeId a = 0, b = 0, c = 0;
};

TEST_F(CollectorTest, AChunkEveryNodeReleasedIsFreedAndItsRequestsAreToldWhy) {
  const ChunkId x = Fetched(a, 1, b);
  EXPECT_TRUE(dir.Holds(a, x));
  EXPECT_TRUE(dir.Holds(b, x));
  Release(a, x, 1);
  EXPECT_EQ(dir.Collect().collected, 0u) << "b still holds it";
  Release(b, x, 1);
  EXPECT_EQ(dir.Collect().collected, 1u);
  EXPECT_EQ(dir.Stats().live, 0u);
  dir.Read(b, 5, x);
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "error");
  EXPECT_EQ(out[0].code, sospb::FREED);
  EXPECT_NE(out[0].message.find("Class7"), std::string::npos) << out[0].message;
  EXPECT_NE(out[0].message.find("distributed garbage collector"), std::string::npos);
  EXPECT_EQ(dir.Stats().collected, 1u);
}

TEST_F(CollectorTest, AReleaseThatCrossesALaterShipmentLeavesTheHold) {
  const ChunkId y = MakeChunkId(a, 2);
  const ChunkId x = Fetched(a, 1, b, {y});  // ships y to b once
  EXPECT_EQ(dir.Holds(b, y), true);
  // b reads x again (its copy was invalidated): a second shipment of y,
  // while b's release of the first is on its way.
  Rewrite(a, b, x, {y});
  Release(b, y, 1);  // the first shipment only
  EXPECT_TRUE(dir.Holds(b, y)) << "the second shipment still counts";
  Release(b, y, 1);
  EXPECT_FALSE(dir.Holds(b, y));
}

TEST_F(CollectorTest, HomeBytesOfAReachableChunkKeepWhatTheyName) {
  const ChunkId y = Fetched(a, 2, c);
  Release(a, y, 1);
  Release(c, y, 1);
  const ChunkId x = Fetched(a, 1, b, {y});
  Release(b, y, 1);  // b dropped its replica of y; x's bytes still name it
  dir.Collect();
  EXPECT_TRUE(Alive(y));
  // a writes x again without the reference, and the new bytes come home.
  Rewrite(a, b, x, {});
  EXPECT_FALSE(dir.Holds(a, y));
  EXPECT_FALSE(dir.Holds(b, y));
  EXPECT_FALSE(dir.Holds(c, y));
  EXPECT_EQ(dir.Collect().collected, 1u);
  EXPECT_FALSE(Alive(y));
  EXPECT_TRUE(Alive(x));
}

TEST_F(CollectorTest, CyclesNobodyHoldsAreCollected) {
  const ChunkId x = MakeChunkId(a, 1);
  const ChunkId y = MakeChunkId(a, 2);
  Fetched(a, 1, b, {y});
  Fetched(a, 2, b, {x});
  Release(a, x, 1);
  Release(a, y, 1);
  Release(b, x, 2);  // its grant, and y's bytes naming it
  dir.Collect();
  EXPECT_TRUE(Alive(x)) << "b still holds y, which names x";
  Release(b, y, 2);
  EXPECT_EQ(dir.Collect().collected, 2u);
  EXPECT_FALSE(Alive(x));
  EXPECT_FALSE(Alive(y));
}

TEST_F(CollectorTest, BlocksOfAHeldArrayStayWhenNobodyHoldsThemSeparately) {
  // An array in blocks, head h with 3 blocks: x names it, so the runs are
  // learned from x's bytes; b has fetched block 2 and let it go.
  const ChunkId h = MakeChunkId(a, 10);
  const ChunkId block2 = Fetched(a, 12, b);
  Release(a, block2, 1);
  Release(b, block2, 1);
  const ChunkId x = Fetched(a, 1, c, {h}, {{h, 3}});
  Release(a, x, 1);
  dir.Collect();
  EXPECT_TRUE(Alive(block2)) << "c holds x, which names the array";
  Release(c, x, 1);
  Release(c, h, 1);
  EXPECT_EQ(dir.Collect().collected, 2u);  // x and the block
  EXPECT_FALSE(Alive(block2));
}

TEST_F(CollectorTest, NamedChunksAreRootsAndTheirReleasesAreIgnored) {
  const ChunkId statics = MakeChunkId(kNamedNode, 77);
  const ChunkId y = MakeChunkId(a, 3);
  dir.Write(b, 1, statics, 0);
  sink.Take();
  dir.Read(c, 2, statics);  // flushes b's copy, naming y
  auto out = sink.Take();
  ASSERT_EQ(out[0].kind, "flush");
  dir.FlushReply(b, statics, out[0].txn, Image({y}));
  sink.Take();
  // y: fetched by c, then released by everyone.
  dir.Read(c, 3, y);
  out = sink.Take();
  ASSERT_EQ(out[0].kind, "flush");
  dir.FlushReply(a, y, out[0].txn, Image());
  sink.Take();
  Release(a, y, 1);
  Release(b, statics, 1);
  Release(c, statics, 1);
  Release(c, y, 2);
  dir.Collect();
  EXPECT_TRUE(Alive(y)) << "the statics name it";
  EXPECT_TRUE(Alive(statics));
}

TEST_F(CollectorTest, ANodeThatGoesAwayHoldsNothing) {
  const ChunkId x = Fetched(a, 1, b);
  Release(a, x, 1);
  EXPECT_EQ(dir.Collect().collected, 0u);
  dir.RemoveNode(b, "crashed");
  EXPECT_EQ(dir.Collect().collected, 1u);
}

TEST_F(CollectorTest, AnEndedProgramsChunksLeaveTheListing) {
  // Nodes forget an ended program's handles without releasing them.
  const ChunkId x = MakeChunkId(a, 1);
  const ChunkId other = MakeChunkId(a, 2);
  for (auto [id, program] : {std::pair<ChunkId, uint64_t>{x, 5}, {other, 6}}) {
    dir.Read(b, 1, id);
    auto out = sink.Take();
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].kind, "flush");
    auto image = Image();
    image->program = program;
    dir.FlushReply(a, id, out[0].txn, std::move(image));
    sink.Take();
  }
  EXPECT_TRUE(dir.Holds(a, x));
  EXPECT_TRUE(dir.Holds(b, x));
  EXPECT_EQ(dir.FreeProgram(5), 1u);
  EXPECT_FALSE(dir.Holds(a, x));
  EXPECT_FALSE(dir.Holds(b, x));
  EXPECT_TRUE(dir.Holds(a, other)) << "another program's holds stay";
  EXPECT_TRUE(dir.Holds(b, other));
}

TEST_F(CollectorTest, AChunkModifiedAtANodeIsNeverCollected) {
  const ChunkId x = Fetched(a, 1, b);
  dir.Write(b, 2, x, 0);
  auto out = sink.Take();
  ASSERT_EQ(out[0].kind, "invalidate");
  dir.InvalidateAck(a, x, out[0].txn);
  out = sink.Take();
  ASSERT_EQ(out[0].kind, "grant");
  Release(a, x, 1);
  Release(b, x, 2);  // a confused node: it holds x modified
  EXPECT_EQ(dir.Collect().collected, 0u);
  EXPECT_EQ(dir.Stats().excess_releases, 0u);
}

TEST_F(CollectorTest, AReleaseOfMoreThanWasShippedIsCountedAndEndsTheHold) {
  const ChunkId x = Fetched(a, 1, b);
  Release(b, x, 5);
  EXPECT_FALSE(dir.Holds(b, x));
  EXPECT_EQ(dir.Stats().excess_releases, 1u);
}

TEST_F(CollectorTest, CollectionIsWantedInProportionToWhatChanged) {
  EXPECT_FALSE(dir.WantsCollection());
  const ChunkId x = Fetched(a, 1, b);
  dir.Collect();
  EXPECT_FALSE(dir.WantsCollection()) << "nothing changed since the last collection";
  Release(b, x, 1);
  // One release among one live entry: due once a second has passed.
  EXPECT_FALSE(dir.WantsCollection());
}

TEST_F(CollectorTest, OnlyHomeBytesThatStopNamingAChunkMakeACollectionDue) {
  // 2,048 first flushes (of objects naming nothing, and naming a chunk)
  // cannot have made garbage: the node that wrote them held what they name.
  std::vector<ChunkId> named, naming;
  for (uint64_t k = 1; k <= 1024; k++) {
    named.push_back(Fetched(a, k, b));
    naming.push_back(Fetched(a, 10000 + k, b, {named.back()}));
  }
  EXPECT_FALSE(dir.WantsCollection()) << "2,048 first home bytes";
  // Bytes naming the same chunk again change nothing either.
  for (uint64_t k = 0; k < 1024; k++) Rewrite(a, b, naming[k], {named[k]});
  EXPECT_FALSE(dir.WantsCollection()) << "1,024 home bytes naming what they named";
  // Bytes that stop naming a chunk may have made it garbage.
  for (uint64_t k = 0; k < 1024; k++) Rewrite(a, b, naming[k], {});
  EXPECT_TRUE(dir.WantsCollection()) << "1,024 home bytes that no longer name a chunk";
}

TEST_F(CollectorTest, AWrittenBackChunkIsHomeAndFreedOnceItsCreatorLetsGo) {
  // Never asked for, so the directory learns of it from the write-back.
  const ChunkId x = MakeChunkId(a, 1);
  dir.WriteBack(a, x, Image());
  auto out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "writtenback");
  EXPECT_TRUE(dir.Holds(a, x));
  EXPECT_EQ(dir.Stats().written_back, 1u);
  dir.Read(b, 2, x);  // at home: no flush asked of a
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "grant");
  Release(a, x, 1);
  Release(b, x, 1);
  EXPECT_EQ(dir.Collect().collected, 1u);
}

TEST_F(CollectorTest, AWriteBackCrossingAFlushIsThatFlushsReply) {
  const ChunkId y = MakeChunkId(a, 2);
  const ChunkId x = Fetched(a, 1, b);
  dir.Write(a, 2, x, 0);  // a modifies x again (b's copy invalidated)
  auto out = sink.Take();
  ASSERT_EQ(out[0].kind, "invalidate");
  dir.InvalidateAck(b, x, out[0].txn);
  sink.Take();
  dir.Read(b, 3, x);  // asks a to flush
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, "flush");
  const uint64_t txn = out[0].txn;
  // a's write-back, sent before the flush reached it, arrives first.
  dir.WriteBack(a, x, Image({y}));
  out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, "superseded");
  EXPECT_EQ(out[1].kind, "grant");
  EXPECT_EQ(out[1].node, b);
  EXPECT_EQ(out[1].refs, std::vector<ChunkId>{y});
  dir.FlushReply(a, x, txn, Image({y}));  // a's reply to the flush: nothing more
  EXPECT_TRUE(sink.Take().empty());
}

TEST_F(CollectorTest, AWriteBackAfterAnotherNodeTookTheChunkChangesNothing) {
  const ChunkId x = Fetched(a, 1, b);
  dir.Write(b, 2, x, 0);
  auto out = sink.Take();
  ASSERT_EQ(out[0].kind, "invalidate");
  dir.InvalidateAck(a, x, out[0].txn);
  sink.Take();
  dir.WriteBack(a, x, Image());  // stale: b owns x
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "superseded");
  dir.Read(c, 3, x);  // still b's to flush
  out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, "flush");
  EXPECT_EQ(out[0].node, b);
}

}  // namespace
}  // namespace sos
}  // namespace djava
