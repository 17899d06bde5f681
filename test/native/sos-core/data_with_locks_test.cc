// Data following its lock, end to end: sos-server's directory and monitor
// service in one ServiceHost (as sos-server's main wires them), real
// sos-clients and monitor clients on loopback. A monitor handed from one
// node to another brings the object's modified chunk along: the new owner
// reads and writes it with no miss of its own.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "djava/monitor_client.h"
#include "djava/sos_client.h"
#include "monitor_host.h"
#include "sos_service.h"
#include "wire/service_host.h"

namespace djava {
namespace {

constexpr char kSecret[] = "data-with-locks-test-secret-0123456789";
constexpr uint64_t kProgram = 3;

class DataWithLocksTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/data-with-locks-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    secret_file_ = dir_ + "/secret";
    std::ofstream(secret_file_) << kSecret;
    chmod(secret_file_.c_str(), 0600);
    auto quiet = [](const std::string&) {};
    sos_ = std::make_unique<sos::SosService>(sos::SosService::Options(), quiet);
    mover_ = std::make_unique<monitor::ChunkMover>(sos_.get());
    monitors_ = std::make_unique<monitor::MonitorHost>(quiet, NoLeases());
    if (GetParam()) monitors_->SetDataMover(mover_.get());
    host_ = std::make_unique<wire::ServiceHost>(kSecret, quiet);
    host_->AddService("sos", [this](std::unique_ptr<wire::Connection> c, const std::string& p) {
      sos_->ServeMain(std::move(c), p);
    });
    host_->AddService("sos-bypass",
                      [this](std::unique_ptr<wire::Connection> c, const std::string& p) {
                        sos_->ServeBypass(std::move(c), p);
                      });
    monitors_->Register(host_.get());
    std::string error;
    ASSERT_TRUE(host_->Listen("127.0.0.1:0", &error)) << error;
    address_ = "127.0.0.1:" + std::to_string(host_->port());
    runner_ = std::thread([this] { host_->Run(); });
  }
  void TearDown() override {
    for (auto* m : monitor_clients_) djava_monitor_close(m);
    for (auto* c : sos_clients_) {
      djava_sos_error e{};
      djava_sos_close(c, &e);
    }
    host_->Stop();
    runner_.join();
    host_.reset();
    monitors_.reset();
    sos_.reset();
    unlink(secret_file_.c_str());
    rmdir(dir_.c_str());
  }
  void TakeTurns(bool lock_of_its_own);
  // Nodes a and b whose monitor clients take their tenures' marks from
  // their caches, and a counter a made (xa; xb: its handle on b).
  struct MarkedPair {
    djava_sos_client *a, *b;
    djava_monitor_client *ma, *mb;
    djava_sos_chunk *xa, *xb;
    uint64_t id;
  };
  MarkedPair Pair();
  // The directory's push crossings since `before`, once they reach `n` or
  // after 10 s: the last turn's may still be on its way (nothing a test
  // waits for follows it).
  uint64_t CrossingsSince(uint64_t before, uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      const uint64_t crossings = sos_->DirectoryStatistics().push_crossings - before;
      if (crossings >= n || std::chrono::steady_clock::now() > deadline) return crossings;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  // A new 8-byte object of the program, 0, made on node c.
  static djava_sos_chunk* NewCounter(djava_sos_client* c) {
    djava_sos_meta meta{};
    meta.class_name = "Counter";
    meta.program = kProgram;
    djava_sos_error e{};
    djava_sos_chunk* x = djava_sos_alloc(c, 8, &meta, &e);
    EXPECT_NE(x, nullptr) << e.message;
    if (x != nullptr) std::memset(djava_sos_data(x), 0, 8);
    return x;
  }
  static monitor::MonitorTable::Options NoLeases() {
    monitor::MonitorTable::Options o;
    o.leases = false;  // every enter and exit reaches the service
    o.wanted_notices = true;
    return o;
  }
  // A node: its cache and its monitor client, which names the cache's
  // directory number.
  std::pair<djava_sos_client*, djava_monitor_client*> Node(const char* name) {
    djava_sos_config config{address_.c_str(), secret_file_.c_str(), name, nullptr};
    djava_sos_client* c = nullptr;
    djava_sos_error e{};
    EXPECT_EQ(djava_sos_connect(&config, &c, &e), DJAVA_SOS_OK) << e.message;
    char err[256] = "";
    djava_monitor_client* m = djava_monitor_connect(address_.c_str(), secret_file_.c_str(),
                                                    djava_sos_node(c), err, sizeof err);
    EXPECT_NE(m, nullptr) << err;
    sos_clients_.push_back(c);
    monitor_clients_.push_back(m);
    return {c, m};
  }

  std::string dir_, secret_file_, address_;
  std::unique_ptr<sos::SosService> sos_;
  std::unique_ptr<monitor::ChunkMover> mover_;
  std::unique_ptr<monitor::MonitorHost> monitors_;
  std::unique_ptr<wire::ServiceHost> host_;
  std::thread runner_;
  std::vector<djava_sos_client*> sos_clients_;
  std::vector<djava_monitor_client*> monitor_clients_;
};

// Whether a thread is queued to enter the monitor of obj within 10 s, as the
// owning thread `asker` sees it.
bool QueuedToEnter(djava_monitor_client* m, uint64_t obj, uint64_t asker) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int owned = 0;
    int64_t count = 0;
    uint64_t keys[4], threads[4];
    if (djava_monitor_state(m, obj, kProgram, asker, &owned, nullptr, keys, threads, 4,
                            &count) != DJAVA_MON_OK)
      return false;
    for (int64_t i = 0; i < count && i < 4; i++)
      if (keys[i] == DJAVA_MON_ENTERING_KEY) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

uint64_t Misses(djava_sos_client* c) {
  djava_sos_stats s{};
  djava_sos_get_stats(c, &s);
  return s.misses;
}

void Add(djava_sos_chunk* x, uint64_t delta) {
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_lock(x, &e), DJAVA_SOS_OK) << e.message;
  uint64_t v;
  std::memcpy(&v, djava_sos_data(x), 8);
  v += delta;
  std::memcpy(djava_sos_data(x), &v, 8);
  djava_sos_release(x);
}

uint64_t Value(djava_sos_chunk* x) {
  djava_sos_error e{};
  EXPECT_EQ(djava_sos_load(x, &e), DJAVA_SOS_OK) << e.message;
  uint64_t v;
  std::memcpy(&v, djava_sos_data(x), 8);
  djava_sos_release(x);
  return v;
}

// Threads of two nodes take turns at a monitor, each adding to an object
// under it while the other is queued: with the data following the lock,
// each turn's access is local after the first; without, each is a miss
// that flushes the other node. The object is the monitor's own, or (a lock
// of its own) another, which moves as what the holder took under the lock.
void DataWithLocksTest::TakeTurns(bool lock_of_its_own) {
  const bool moves = GetParam();
  auto [a, ma] = Node("a");
  auto [b, mb] = Node("b");
  djava_sos_chunk* xa = NewCounter(a);
  ASSERT_NE(xa, nullptr);
  djava_sos_chunk* xb = djava_sos_chunk_for(b, djava_sos_id(xa));
  uint64_t id = djava_sos_id(xa);
  if (lock_of_its_own) {
    djava_sos_chunk* lock = NewCounter(a);
    ASSERT_NE(lock, nullptr);
    id = djava_sos_id(lock);
    Value(djava_sos_chunk_for(b, id));  // read-shared from now on: it never moves
  }

  constexpr int kTurns = 20;
  // a's thread 1 and b's thread 2 alternate: each enters, adds, then lets
  // the other in (the other is queued by then: it entered before the exit).
  ASSERT_EQ(djava_monitor_enter(ma, id, kProgram, 1), DJAVA_MON_OK);
  Add(xa, 1);
  uint64_t b_misses_before = 0, a_misses_before = 0, crossings_before = 0;
  for (int turn = 0; turn < kTurns; turn++) {
    const bool to_b = turn % 2 == 0;
    djava_monitor_client* next_m = to_b ? mb : ma;
    djava_monitor_client* this_m = to_b ? ma : mb;
    const uint64_t next_thread = to_b ? 2 : 1, this_thread = to_b ? 1 : 2;
    std::promise<int> entered;
    std::thread next([&] { entered.set_value(djava_monitor_enter(next_m, id, kProgram, next_thread)); });
    // The other thread is queued before this one exits.
    ASSERT_TRUE(QueuedToEnter(this_m, id, this_thread));
    ASSERT_EQ(djava_monitor_exit(this_m, id, kProgram, this_thread), DJAVA_MON_OK);
    auto f = entered.get_future();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    next.join();
    ASSERT_EQ(f.get(), DJAVA_MON_OK);
    if (turn == 2) {
      a_misses_before = Misses(a);
      b_misses_before = Misses(b);
      crossings_before = sos_->DirectoryStatistics().push_crossings;
    }
    Add(to_b ? xb : xa, 1);
  }
  const uint64_t turn_misses = Misses(a) - a_misses_before + Misses(b) - b_misses_before;
  if (moves) {
    // A thread may read its monitor grant before its cache has read the
    // data's (two connections): its miss then reaches the directory after
    // the move and is answered by the grant already on its way. No miss
    // goes any further.
    const uint64_t crossings = CrossingsSince(crossings_before, turn_misses);
    EXPECT_EQ(turn_misses, crossings) << "each turn's object arrived with its lock";
    EXPECT_LE(turn_misses, static_cast<uint64_t>(kTurns / 2));
  } else {
    EXPECT_GE(turn_misses, static_cast<uint64_t>(kTurns - 3)) << "a miss a turn";
  }
  ASSERT_EQ(djava_monitor_exit(kTurns % 2 == 0 ? ma : mb, id, kProgram, kTurns % 2 == 0 ? 1 : 2),
            DJAVA_MON_OK);
  EXPECT_EQ(Value(xa), static_cast<uint64_t>(kTurns + 1));
  EXPECT_EQ(Value(xb), static_cast<uint64_t>(kTurns + 1));
  // All but the first hand-off: a's chunk was not in the directory yet
  // (its creator held it from its making, unasked), so b fetched it.
  EXPECT_EQ(sos_->DirectoryStatistics().pushes, moves ? static_cast<uint64_t>(kTurns - 1) : 0u);
}

TEST_P(DataWithLocksTest, AMonitorHandedToAnotherNodeBringsItsObjectAlong) {
  TakeTurns(/*lock_of_its_own=*/false);
}

TEST_P(DataWithLocksTest, ALockOfItsOwnBringsWhatItsHolderTookUnderIt) {
  TakeTurns(/*lock_of_its_own=*/true);
}

uint64_t MarkOf(void* sos) { return djava_sos_exclusive_mark(static_cast<djava_sos_client*>(sos)); }

DataWithLocksTest::MarkedPair DataWithLocksTest::Pair() {
  auto [a, ma] = Node("a");
  auto [b, mb] = Node("b");
  djava_monitor_set_mark_source(ma, MarkOf, a);
  djava_monitor_set_mark_source(mb, MarkOf, b);
  djava_sos_chunk* xa = NewCounter(a);
  const uint64_t id = xa != nullptr ? djava_sos_id(xa) : 0;
  return {a, b, ma, mb, xa, xa != nullptr ? djava_sos_chunk_for(b, id) : nullptr, id};
}

// Data leaves with the release: the holder hears that the other node is
// queued, writes home and drops what it took under the monitor, and names
// it in its Exit. With the directory moving data with locks, the next
// holder is granted it with the monitor; without, it finds it at home.
TEST_P(DataWithLocksTest, WhatAReleaseHandsOverGoesAheadOfIt) {
  const bool moves = GetParam();
  const MarkedPair p = Pair();
  ASSERT_NE(p.xa, nullptr);
  auto [a, b, ma, mb, xa, xb, id] = p;

  constexpr int kTurns = 20;
  ASSERT_EQ(djava_monitor_enter_grouped(ma, id, kProgram, 1), DJAVA_MON_OK);
  Add(xa, 1);
  uint64_t a_misses_before = 0, b_misses_before = 0, crossings_before = 0;
  for (int turn = 0; turn < kTurns; turn++) {
    const bool to_b = turn % 2 == 0;
    djava_monitor_client* next_m = to_b ? mb : ma;
    djava_monitor_client* this_m = to_b ? ma : mb;
    djava_sos_client* this_c = to_b ? a : b;
    const uint64_t next_thread = to_b ? 2 : 1, this_thread = to_b ? 1 : 2;
    std::promise<int> entered;
    std::thread next([&] {
      entered.set_value(djava_monitor_enter_grouped(next_m, id, kProgram, next_thread));
    });
    ASSERT_TRUE(QueuedToEnter(this_m, id, this_thread));
    // The service told this node before it answered the query.
    uint64_t since = 0;
    ASSERT_EQ(djava_monitor_release_wanted(this_m, id, kProgram, this_thread, 0, &since), 1)
        << "turn " << turn;
    uint64_t ids[8];
    const size_t n = djava_sos_hand_over(this_c, since, kProgram, 0, ids, 8);
    if (turn == 0) {
      EXPECT_EQ(n, 0u) << "a made the object before its thread asked for the monitor";
    } else {
      ASSERT_EQ(n, 1u) << "turn " << turn << ": what the tenure took, and only that";
      EXPECT_EQ(ids[0], id);
    }
    djava_monitor_note_released(this_m, id, kProgram, this_thread, ids, n);
    ASSERT_EQ(djava_monitor_exit(this_m, id, kProgram, this_thread), DJAVA_MON_OK);
    auto f = entered.get_future();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    next.join();
    ASSERT_EQ(f.get(), DJAVA_MON_OK);
    if (turn == 1) {
      a_misses_before = Misses(a);
      b_misses_before = Misses(b);
      crossings_before = sos_->DirectoryStatistics().push_crossings;
    }
    Add(to_b ? xb : xa, 1);
  }
  const auto stats = sos_->DirectoryStatistics();
  // Every copy handed over reached home: accepted there, or answering the
  // flush that a request overtaking it asked for.
  EXPECT_EQ(stats.released_with_lock, static_cast<uint64_t>(kTurns - 1));
  const uint64_t turn_misses = Misses(a) - a_misses_before + Misses(b) - b_misses_before;
  if (moves) {
    // Each turn's object was granted with the monitor: from home when the
    // write-back reached the directory before the release reached the
    // service, else by a flush of the releaser that its write-back, ahead
    // of the reply, answered. A miss is only ever one that crossed it.
    const uint64_t crossings = CrossingsSince(crossings_before, turn_misses);
    EXPECT_EQ(turn_misses, crossings);
    EXPECT_EQ(stats.pushes, static_cast<uint64_t>(kTurns - 1));
  } else {
    // A miss a turn, served from home, or (when it overtook the write-back)
    // by the flush of the releaser that the write-back answered.
    EXPECT_GE(turn_misses, static_cast<uint64_t>(kTurns - 3));
  }
  EXPECT_EQ(stats.lost, 0u);
  ASSERT_EQ(djava_monitor_exit(kTurns % 2 == 0 ? ma : mb, id, kProgram, kTurns % 2 == 0 ? 1 : 2),
            DJAVA_MON_OK);
  EXPECT_EQ(Value(xa), static_cast<uint64_t>(kTurns + 1));
  EXPECT_EQ(Value(xb), static_cast<uint64_t>(kTurns + 1));
}

// How many threads are queued to enter the monitor of obj, as the owning
// thread `asker` sees it, once they are `n` (or after 10 s).
int64_t QueuedToEnterCount(djava_monitor_client* m, uint64_t obj, uint64_t asker, int64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int64_t queued = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    int owned = 0;
    int64_t count = 0;
    uint64_t keys[8], threads[8];
    if (djava_monitor_state(m, obj, kProgram, asker, &owned, nullptr, keys, threads, 8,
                            &count) != DJAVA_MON_OK)
      return -1;
    queued = 0;
    for (int64_t i = 0; i < count && i < 8; i++) queued += keys[i] == DJAVA_MON_ENTERING_KEY;
    if (queued >= n) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return queued;
}

// A release hands its data over because another node wants the monitor,
// but a thread of its own node is ahead in the queue (one a notifyAll woke
// there): what it wrote home comes back with that thread's grant instead of
// faulting in. That thread only reads it, so its copy is clean: its release
// gives it back without bytes and names it, and it goes to the other
// node's thread with the monitor.
TEST_P(DataWithLocksTest, AReleaseToItsOwnNodeBringsWhatItHandedOverBack) {
  const bool moves = GetParam();
  const MarkedPair p = Pair();
  ASSERT_NE(p.xa, nullptr);
  auto [a, b, ma, mb, xa, xb, id] = p;
  Value(xb);  // in the directory, and read-shared: a's next write takes it back

  ASSERT_EQ(djava_monitor_enter_grouped(ma, id, kProgram, 1), DJAVA_MON_OK);
  Add(xa, 1);
  // a's thread 2 queues first, then b's thread 3.
  std::promise<int> a2_entered, b3_entered;
  std::thread a2([&] { a2_entered.set_value(djava_monitor_enter_grouped(ma, id, kProgram, 2)); });
  ASSERT_EQ(QueuedToEnterCount(ma, id, 1, 1), 1);
  std::thread b3([&] { b3_entered.set_value(djava_monitor_enter_grouped(mb, id, kProgram, 3)); });
  ASSERT_EQ(QueuedToEnterCount(ma, id, 1, 2), 2);
  uint64_t since = 0;
  ASSERT_EQ(djava_monitor_release_wanted(ma, id, kProgram, 1, 0, &since), 1);
  uint64_t ids[8];
  ASSERT_EQ(djava_sos_hand_over(a, since, kProgram, 0, ids, 8), 1u);
  djava_monitor_note_released(ma, id, kProgram, 1, ids, 1);
  const uint64_t a_misses = Misses(a), pushes = sos_->DirectoryStatistics().pushes;
  const uint64_t a_crossings = sos_->DirectoryStatistics().push_crossings;
  ASSERT_EQ(djava_monitor_exit(ma, id, kProgram, 1), DJAVA_MON_OK);
  auto f2 = a2_entered.get_future();
  ASSERT_EQ(f2.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  a2.join();
  ASSERT_EQ(f2.get(), DJAVA_MON_OK);
  EXPECT_EQ(Value(xa), 1u);  // thread 2 reads what thread 1 wrote
  if (moves) {
    EXPECT_EQ(sos_->DirectoryStatistics().pushes, pushes + 1) << "back with the grant";
    // The push's grant may reach the cache after the monitor's (two
    // connections): a miss then crosses it, and the grant answers it.
    const uint64_t crossings = CrossingsSince(a_crossings, Misses(a) - a_misses);
    EXPECT_EQ(Misses(a) - a_misses, crossings);
  }

  // Thread 2 read it only: its release gives the clean copy back.
  ASSERT_EQ(djava_monitor_release_wanted(ma, id, kProgram, 2, 0, &since), 1);
  const size_t n = djava_sos_hand_over(a, since, kProgram, 0, ids, 8);
  if (moves) {
    ASSERT_EQ(n, 1u) << "the clean copy goes back";
    EXPECT_EQ(ids[0], id);
  }
  djava_monitor_note_released(ma, id, kProgram, 2, ids, n);
  const uint64_t b_misses = Misses(b), b_pushes = sos_->DirectoryStatistics().pushes;
  const uint64_t b_crossings = sos_->DirectoryStatistics().push_crossings;
  ASSERT_EQ(djava_monitor_exit(ma, id, kProgram, 2), DJAVA_MON_OK);
  auto f3 = b3_entered.get_future();
  ASSERT_EQ(f3.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  b3.join();
  ASSERT_EQ(f3.get(), DJAVA_MON_OK);
  Add(xb, 1);
  if (moves) {
    // Granted from home at once, or (when the exit reached the service
    // before the give-back reached the directory: two connections) by a
    // flush of a that the give-back, ahead of a's reply, answered.
    EXPECT_EQ(sos_->DirectoryStatistics().pushes, b_pushes + 1) << "with the monitor";
    EXPECT_EQ(sos_->DirectoryStatistics().clean_returns, 1u) << "a's copy went back clean";
    const uint64_t crossings = CrossingsSince(b_crossings, Misses(b) - b_misses);
    EXPECT_EQ(Misses(b) - b_misses, crossings);
  }
  ASSERT_EQ(djava_monitor_exit(mb, id, kProgram, 3), DJAVA_MON_OK);
  EXPECT_EQ(Value(xa), 2u);
  EXPECT_EQ(sos_->DirectoryStatistics().lost, 0u);
}

// A node that handed a copy over and touches it again at once (another of
// its threads, racing the next holder) waits for its write-back's answer
// before it asks: a request on the main connection must not overtake the
// write-back on the bypass.
TEST_P(DataWithLocksTest, AHandedOverCopyIsAskedForOnlyAfterItsWriteBack) {
  auto [a, ma] = Node("a");
  auto [b, mb] = Node("b");
  djava_sos_chunk* xa = NewCounter(a);
  ASSERT_NE(xa, nullptr);
  djava_sos_chunk* xb = djava_sos_chunk_for(b, djava_sos_id(xa));
  for (int round = 0; round < 50; round++) {
    djava_sos_chunk* mine = round % 2 == 0 ? xa : xb;
    djava_sos_client* c = round % 2 == 0 ? a : b;
    const uint64_t since = djava_sos_exclusive_mark(c);
    Add(mine, 1);  // a miss after the first round: the other dropped it
    uint64_t ids[8];
    ASSERT_EQ(djava_sos_hand_over(c, round == 0 ? 0 : since, kProgram, 0, ids, 8), 1u)
        << "round " << round;
    // Again at once, and the other way round: each reads what the last wrote.
    ASSERT_EQ(Value(mine), static_cast<uint64_t>(round + 1));
  }
  EXPECT_EQ(sos_->DirectoryStatistics().lost, 0u);
  EXPECT_EQ(sos_->DirectoryStatistics().errors, 0u) << "no request overtook its write-back";
}

// The log of chunks taken exclusively is the node's, whose threads run
// several programs; a release hands over only its own program's (the next
// holder runs only that one: another's chunk granted there would outlive
// its program on that node, a handle nothing there ever forgets).
TEST_P(DataWithLocksTest, AReleaseHandsOverOnlyItsProgramsChunks) {
  auto [a, ma] = Node("a");
  (void)ma;
  const uint64_t since = djava_sos_exclusive_mark(a);
  djava_sos_chunk* mine = NewCounter(a);
  djava_sos_meta meta{};
  meta.class_name = "Counter";
  meta.program = kProgram + 1;
  djava_sos_error e{};
  djava_sos_chunk* other = djava_sos_alloc(a, 8, &meta, &e);
  ASSERT_NE(mine, nullptr);
  ASSERT_NE(other, nullptr) << e.message;
  std::memset(djava_sos_data(other), 0, 8);
  uint64_t ids[8];
  ASSERT_EQ(djava_sos_hand_over(a, since, kProgram, 0, ids, 8), 1u);
  EXPECT_EQ(ids[0], djava_sos_id(mine));
  EXPECT_EQ(djava_sos_hand_over(a, since, 0, 0, ids, 8), 0u) << "a thread of no program";
}

// A synchronizer's release hands over only the JDK's objects: a program's
// own object written under the lock may be read outside it through a final
// field (t.lock.lock()), and dropped at the releaser that read would miss.
TEST_P(DataWithLocksTest, ASynchronizersReleaseHandsOverOnlyTheJdksObjects) {
  auto [a, ma] = Node("a");
  (void)ma;
  const uint64_t since = djava_sos_exclusive_mark(a);
  djava_sos_error e{};
  auto make = [&](const char* name) {
    djava_sos_meta meta{};
    meta.class_name = name;
    meta.program = kProgram;
    djava_sos_chunk* c = djava_sos_alloc(a, 8, &meta, &e);
    if (c != nullptr) std::memset(djava_sos_data(c), 0, 8);
    return c;
  };
  djava_sos_chunk* queue = make("java/util/concurrent/ArrayBlockingQueue");
  djava_sos_chunk* items = make("[Ljava/lang/Object;");
  djava_sos_chunk* counts = make("[I");
  djava_sos_chunk* turns = make("Sync$Turns");
  djava_sos_chunk* elsewhere = make("[Ljavax/Thing;");
  ASSERT_TRUE(queue && items && counts && turns && elsewhere) << e.message;
  uint64_t ids[8];
  const size_t n = djava_sos_hand_over(a, since, kProgram, DJAVA_SOS_HAND_OVER_JDK_ONLY, ids, 8);
  std::set<uint64_t> handed(ids, ids + n);
  EXPECT_EQ(handed, (std::set<uint64_t>{djava_sos_id(queue), djava_sos_id(items),
                                        djava_sos_id(counts)}));
  // Without the flag (a Java monitor's release) the rest goes too.
  EXPECT_EQ(djava_sos_hand_over(a, since, kProgram, 0, ids, 8), 2u);
}

// Whether c's handle count becomes n within 10 s: what arrives on a node's
// main connection (a grant pushed with a lock) is not ordered with what
// arrives on its monitor connection (the lock itself).
bool HandleCountBecomes(djava_sos_client* c, size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (djava_sos_handle_count(c) != n) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A grant moved with its lock that no access on the new owner used: its
// handle there goes when its program ends, or when the chunk is taken back
// unused, as a handle nothing names does (a thread server runs program
// after program: none may be left behind).
class MovedGrantTest : public DataWithLocksTest {
 protected:
  // Node b gets x's chunk with x's monitor and never touches it; returns
  // the nodes (a, b) and x's handle on a. ended_first: b let go of the
  // program's handles before (the grant arrives after its program's end).
  void MoveUnused(djava_sos_client** a_out, djava_sos_client** b_out, djava_sos_chunk** xa_out,
                  bool ended_first = false) {
    auto [a, ma] = Node("a");
    auto [b, mb] = Node("b");
    auto [c, mc] = Node("c");
    (void)mc;
    if (ended_first) {
      EXPECT_EQ(djava_sos_forget_program(b, kProgram, nullptr, 0, nullptr, 0), 0u);
    }
    djava_sos_chunk* xa = NewCounter(a);
    ASSERT_NE(xa, nullptr);
    const uint64_t id = djava_sos_id(xa);
    // Into the directory (c reads it), then modified at a again: a moved
    // chunk is one the directory knows to be modified at the releaser.
    EXPECT_EQ(Value(djava_sos_chunk_for(c, id)), 0u);
    ASSERT_EQ(djava_monitor_enter(ma, id, kProgram, 1), DJAVA_MON_OK);
    Add(xa, 5);
    std::promise<int> entered;
    std::thread next([&] { entered.set_value(djava_monitor_enter(mb, id, kProgram, 2)); });
    ASSERT_TRUE(QueuedToEnter(ma, id, 1));
    ASSERT_EQ(djava_monitor_exit(ma, id, kProgram, 1), DJAVA_MON_OK);
    auto f = entered.get_future();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    next.join();
    ASSERT_EQ(f.get(), DJAVA_MON_OK);
    ASSERT_EQ(djava_monitor_exit(mb, id, kProgram, 2), DJAVA_MON_OK);
    ASSERT_EQ(sos_->DirectoryStatistics().pushes, 1u);
    if (!ended_first) {
      EXPECT_TRUE(HandleCountBecomes(b, 1)) << "the moved grant's handle: "
                                            << djava_sos_handle_count(b) << " handles";
    }
    *a_out = a;
    *b_out = b;
    *xa_out = xa;
  }
};

TEST_P(MovedGrantTest, ItsHandleGoesWithItsProgram) {
  djava_sos_client *a = nullptr, *b = nullptr;
  djava_sos_chunk* xa = nullptr;
  ASSERT_NO_FATAL_FAILURE(MoveUnused(&a, &b, &xa));
  EXPECT_EQ(djava_sos_forget_program(b, kProgram, nullptr, 0, nullptr, 0), 1u);
  EXPECT_EQ(djava_sos_handle_count(b), 0u);
}

TEST_P(MovedGrantTest, OneThatArrivesAfterItsProgramEndedGoesByItself) {
  // Nothing here installs it, and no later program's end may be coming.
  djava_sos_client *a = nullptr, *b = nullptr;
  djava_sos_chunk* xa = nullptr;
  ASSERT_NO_FATAL_FAILURE(MoveUnused(&a, &b, &xa, /*ended_first=*/true));
  EXPECT_TRUE(HandleCountBecomes(b, 0)) << djava_sos_handle_count(b) << " handles left";
  // It went home with its bytes, not dropped: the chunk outlives the
  // program that ended on b (a JDK object that program published first,
  // which another program uses), and b held its only current copy.
  djava_sos_client* d = Node("d").first;
  EXPECT_EQ(Value(djava_sos_chunk_for(d, djava_sos_id(xa))), 5u);
  EXPECT_EQ(sos_->DirectoryStatistics().lost, 0u);
}

TEST_P(MovedGrantTest, ItsHandleGoesWhenTakenBackUnused) {
  djava_sos_client *a = nullptr, *b = nullptr;
  djava_sos_chunk* xa = nullptr;
  ASSERT_NO_FATAL_FAILURE(MoveUnused(&a, &b, &xa));
  // a writes it again: b's copy goes back unused, and b lets go of the id.
  Add(xa, 1);
  EXPECT_EQ(Value(xa), 6u);
  EXPECT_TRUE(HandleCountBecomes(b, 0)) << djava_sos_handle_count(b) << " handles left";
}

INSTANTIATE_TEST_SUITE_P(Moving, MovedGrantTest, ::testing::Values(true),
                         [](const ::testing::TestParamInfo<bool>&) { return std::string("Moving"); });

INSTANTIATE_TEST_SUITE_P(WithAndWithout, DataWithLocksTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("Moving") : std::string("NotMoving");
                         });

}  // namespace
}  // namespace djava
