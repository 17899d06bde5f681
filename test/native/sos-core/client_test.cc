// sos-client against a real server on loopback: the service runs in this
// process (SosService on a wire::ServiceHost, as sos-server's main does), the
// clients connect over TCP exactly as a JVM's would.
#include <gtest/gtest.h>
#include <linux/membarrier.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "djava/sos_client.h"
#include "sos_service.h"
#include "wire/service_host.h"

namespace djava {
namespace sos {
namespace {

class Server {
 public:
  explicit Server(SosService::Options options = SosService::Options())
      : service_(options, nullptr), host_(kSecret, nullptr) {
    char dir[] = "/tmp/sos-client-test-XXXXXX";
    EXPECT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    secret_file_ = dir_ + "/secret";
    std::ofstream(secret_file_) << kSecret;
    chmod(secret_file_.c_str(), 0600);
    host_.AddService("sos", [this](std::unique_ptr<wire::Connection> c, const std::string& p) {
      service_.ServeMain(std::move(c), p);
    });
    host_.AddService("sos-bypass",
                     [this](std::unique_ptr<wire::Connection> c, const std::string& p) {
                       service_.ServeBypass(std::move(c), p);
                     });
    std::string error;
    EXPECT_TRUE(host_.Listen("127.0.0.1:0", &error)) << error;
    address_ = "127.0.0.1:" + std::to_string(host_.port());
    thread_ = std::thread([this] { host_.Run(); });
  }
  ~Server() {
    Stop();
    unlink(secret_file_.c_str());
    rmdir(dir_.c_str());
  }
  void Stop() {
    if (thread_.joinable()) {
      host_.Stop();
      thread_.join();
    }
  }

  djava_sos_client* Connect(const char* name, const djava_sos_callbacks* cb = nullptr) {
    djava_sos_config config{address_.c_str(), secret_file_.c_str(), name, cb};
    djava_sos_client* c = nullptr;
    djava_sos_error e{};
    EXPECT_EQ(djava_sos_connect(&config, &c, &e), DJAVA_SOS_OK) << e.message;
    return c;
  }
  const std::string& address() const { return address_; }
  const std::string& secret_file() const { return secret_file_; }
  SosService& service() { return service_; }

 private:
  static constexpr const char* kSecret = "a cluster secret of enough bytes";
  std::string dir_, secret_file_, address_;
  SosService service_;
  wire::ServiceHost host_;
  std::thread thread_;
};

uint64_t ReadU64(djava_sos_chunk* c, size_t offset = 0) {
  djava_sos_error e{};
  const djava_sos_status status = djava_sos_load(c, &e);
  EXPECT_EQ(status, DJAVA_SOS_OK) << e.message;
  if (status != DJAVA_SOS_OK) return ~uint64_t{0};  // no bytes to read
  uint64_t v;
  std::memcpy(&v, static_cast<char*>(djava_sos_data(c)) + offset, 8);
  djava_sos_release(c);
  return v;
}

void WriteU64(djava_sos_chunk* c, uint64_t v, size_t offset = 0) {
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_lock(c, &e), DJAVA_SOS_OK) << e.message;
  std::memcpy(static_cast<char*>(djava_sos_data(c)) + offset, &v, 8);
  djava_sos_release(c);
}

djava_sos_meta Meta(const char* cls, uint32_t length = 0, uint32_t hash = 0) {
  djava_sos_meta m{};
  m.class_name = cls;
  m.program = 42;
  m.element_type = length ? 11 : 0;
  m.array_length = length;
  m.identity_hash = hash;
  return m;
}

// sos-server --trace-sos: a read of another node's modified chunk shows as
// the reader's request, the flush asked of the owner, its reply and the
// grant, in that order, each on its node's line; the chunk's bytes show as
// their size, never as themselves.
TEST(SosClient, TheTraceListsAMissMessageByMessageWithBytesAsSizes) {
  Server server;
  char path[] = "/tmp/sos-trace-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string error;
  ASSERT_TRUE(server.service().TraceTo(path, &error)) << error;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_meta meta = Meta("[J", 2, 0xbeef);
  djava_sos_error e{};
  djava_sos_chunk* ca = djava_sos_alloc(a, 16, &meta, &e);
  ASSERT_NE(ca, nullptr) << e.message;
  WriteU64(ca, 0x4847464544434241);  // "ABCDEFGH"
  EXPECT_EQ(ReadU64(djava_sos_chunk_for(b, djava_sos_id(ca))), 0x4847464544434241u);
  const std::string na = "node " + std::to_string(djava_sos_node(a));
  const std::string nb = "node " + std::to_string(djava_sos_node(b));
  const std::string id = std::to_string(djava_sos_id(ca));
  djava_sos_abandon(b);
  djava_sos_abandon(a);
  server.Stop();

  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  unlink(path);
  std::string trace;
  for (const std::string& l : lines) trace += l + "\n";
  auto first = [&](const std::string& who, const std::string& what) {
    for (size_t i = 0; i < lines.size(); i++)
      if (lines[i].find(who) != std::string::npos && lines[i].find(what) != std::string::npos)
        return static_cast<int>(i);
    return -1;
  };
  const int read = first(nb + " <- ", "read { id: " + id);
  const int flush = first(na + " -> ", "flush { id: " + id);
  const int reply = first(na + " <- ", "flush_reply {");
  const int grant = first(nb + " -> ", "grant {");
  EXPECT_GE(read, 0) << trace;
  EXPECT_LT(read, flush) << trace;
  EXPECT_LT(flush, reply) << trace;
  EXPECT_LT(reply, grant) << trace;
  EXPECT_NE(lines[std::max(grant, 0)].find("data: <16 bytes>"), std::string::npos) << trace;
  EXPECT_EQ(trace.find("ABCDEFGH"), std::string::npos) << "bytes as themselves:\n" << trace;
}

TEST(SosClient, AnotherNodeReadsWhatTheCreatorWroteWithItsMeta) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_meta meta = Meta("[J", 2, 0xbeef);
  djava_sos_error e{};
  djava_sos_chunk* ca = djava_sos_alloc(a, 16, &meta, &e);
  ASSERT_NE(ca, nullptr) << e.message;
  EXPECT_EQ(djava_sos_id(ca) >> 40, djava_sos_node(a));
  WriteU64(ca, 41);
  WriteU64(ca, 42, 8);

  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  EXPECT_EQ(ReadU64(cb), 41u);
  EXPECT_EQ(ReadU64(cb, 8), 42u);
  const djava_sos_meta* m = djava_sos_meta_of(cb);
  ASSERT_NE(m, nullptr);
  EXPECT_STREQ(m->class_name, "[J");
  EXPECT_EQ(m->program, 42u);
  EXPECT_EQ(m->element_type, 11);
  EXPECT_EQ(m->array_length, 2u);
  EXPECT_EQ(m->identity_hash, 0xbeefu);
  EXPECT_EQ(djava_sos_size(cb), 16u);
  EXPECT_EQ(djava_sos_chunk_for(b, djava_sos_id(ca)), cb) << "one handle per id";
  djava_sos_abandon(b);
  djava_sos_abandon(a);
}

TEST(SosClient, ARunOfChunksHasConsecutiveIdsEachCoherentOnItsOwn) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_meta meta = Meta("[J", 4096, 0xb10c);
  const size_t sizes[] = {16, 8, 8, 8};
  djava_sos_error e{};
  djava_sos_chunk* head = djava_sos_alloc_run(a, 4, sizes, &meta, &e);
  ASSERT_NE(head, nullptr) << e.message;
  const uint64_t base = djava_sos_id(head);
  djava_sos_chunk* blocks_a[3];
  djava_sos_chunk* blocks_b[3];
  for (int k = 0; k < 3; k++) {
    blocks_a[k] = djava_sos_chunk_for(a, base + 1 + k);
    ASSERT_NE(blocks_a[k], nullptr);
    EXPECT_EQ(djava_sos_size(blocks_a[k]), 8u);
    WriteU64(blocks_a[k], 100 + k);
    blocks_b[k] = djava_sos_chunk_for(b, base + 1 + k);
  }
  EXPECT_EQ(djava_sos_id(djava_sos_alloc(a, 8, &meta, &e)), base + 4) << "the run used its ids";
  // b writes block 1 only; a keeps writing blocks 0 and 2 without a miss.
  WriteU64(blocks_b[1], 7);
  djava_sos_stats before{}, after{};
  djava_sos_get_stats(a, &before);
  for (uint64_t i = 0; i < 10; i++) {
    WriteU64(blocks_a[0], i);
    WriteU64(blocks_a[2], i);
    WriteU64(blocks_b[1], i);
  }
  djava_sos_get_stats(a, &after);
  EXPECT_EQ(after.misses, before.misses) << "disjoint blocks never conflict";
  EXPECT_EQ(ReadU64(blocks_b[0]), 9u);
  EXPECT_EQ(ReadU64(blocks_a[1]), 9u);
  EXPECT_EQ(ReadU64(blocks_b[2]), 9u);
  const djava_sos_meta* m = djava_sos_meta_of(blocks_b[2]);
  ASSERT_NE(m, nullptr);
  EXPECT_STREQ(m->class_name, "[J") << "a block carries its array's class (and program)";
  djava_sos_abandon(b);
  djava_sos_abandon(a);
}

TEST(SosClient, AWriteInvalidatesOtherReadCopies) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_client* c = server.Connect("c");
  djava_sos_meta meta = Meta("Counter");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, &meta, nullptr);
  WriteU64(ca, 1);
  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  djava_sos_chunk* cc = djava_sos_chunk_for(c, djava_sos_id(ca));
  EXPECT_EQ(ReadU64(cb), 1u);
  EXPECT_EQ(ReadU64(cc), 1u);
  WriteU64(ca, 2);  // a shares it now: an upgrade that invalidates b and c
  EXPECT_EQ(ReadU64(cb), 2u);
  EXPECT_EQ(ReadU64(cc), 2u);
  WriteU64(cc, 3);
  EXPECT_EQ(ReadU64(ca), 3u);
  EXPECT_EQ(ReadU64(cb), 3u);
  djava_sos_stats stats{};
  djava_sos_get_stats(a, &stats);
  EXPECT_GE(stats.invalidations, 1u);
  EXPECT_GE(stats.upgrades, 1u);
  djava_sos_abandon(a);
  djava_sos_abandon(b);
  djava_sos_abandon(c);
}

TEST(SosClient, EachChunkCountsItsOwnShareOfTheTraffic) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_chunk* hot = djava_sos_alloc(a, 16, nullptr, nullptr);
  djava_sos_chunk* cold = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(hot, 1);
  WriteU64(cold, 1);
  djava_sos_chunk* hot_b = djava_sos_chunk_for(b, djava_sos_id(hot));
  djava_sos_chunk* cold_b = djava_sos_chunk_for(b, djava_sos_id(cold));
  for (uint64_t i = 2; i < 5; i++) {
    EXPECT_EQ(ReadU64(hot_b), i - 1);
    WriteU64(hot, i);  // invalidates b's copy
  }
  EXPECT_EQ(ReadU64(cold_b), 1u);
  djava_sos_stats hot_stats{}, cold_stats{}, total{};
  djava_sos_chunk_stats(hot_b, &hot_stats);
  djava_sos_chunk_stats(cold_b, &cold_stats);
  djava_sos_get_stats(b, &total);
  EXPECT_EQ(hot_stats.misses, 3u);
  EXPECT_EQ(hot_stats.bytes_in, 3 * 16u);
  EXPECT_GE(hot_stats.invalidations, 2u);
  EXPECT_EQ(cold_stats.misses, 1u);
  EXPECT_EQ(cold_stats.bytes_in, 8u);
  EXPECT_EQ(cold_stats.invalidations, 0u);
  EXPECT_EQ(hot_stats.misses + cold_stats.misses, total.misses);
  EXPECT_EQ(hot_stats.bytes_in + cold_stats.bytes_in, total.bytes_in);
  djava_sos_stats hot_a{};
  djava_sos_chunk_stats(hot, &hot_a);
  EXPECT_GE(hot_a.flushes, 1u);  // a's first modified copy went to b through a flush
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

TEST(SosClient, ItsMessagesAreCountedByKind) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(ca, 1);
  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  EXPECT_EQ(ReadU64(cb), 1u);  // b reads: a's modified copy comes by a flush
  WriteU64(ca, 2);             // a's upgrade invalidates b's copy
  auto traffic = [](djava_sos_client* c) {
    char text[512];
    const size_t n = djava_sos_traffic(c, text, sizeof(text));
    EXPECT_LT(n, sizeof(text));
    EXPECT_EQ(n, djava_sos_traffic(c, nullptr, 0));  // the length alone
    return std::string(text);
  };
  const std::string of_b = traffic(b);
  EXPECT_NE(std::string::npos, of_b.find("requests read 1")) << of_b;
  EXPECT_NE(std::string::npos, of_b.find("bypass invalidate_ack 1")) << of_b;
  EXPECT_NE(std::string::npos, of_b.find("received grant 1, invalidate 1")) << of_b;
  const std::string of_a = traffic(a);
  EXPECT_NE(std::string::npos, of_a.find("write 1")) << of_a;
  EXPECT_NE(std::string::npos, of_a.find("flush_reply 1")) << of_a;
  EXPECT_NE(std::string::npos, of_a.find("received grant 1, flush 1")) << of_a;
  char cut[8];
  EXPECT_EQ(of_b.size(), djava_sos_traffic(b, cut, sizeof(cut)));
  EXPECT_EQ(of_b.substr(0, sizeof(cut) - 1), std::string(cut));
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

// A flush that crosses this node's write-back is answered by it (the server
// takes the write-back for the reply). When the flush is carried out only
// after the write-back's answer came (an access held it up), the copy must
// still go as the flush says: kept as a read copy the server no longer
// lists, it would never be invalidated again, and its reads would stay
// stale for good.
TEST(SosClient, AFlushThatCrossedAWriteBackLeavesNoCopyUnlisted) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(ca, 1);
  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  std::mt19937 random(7);
  // Bounded: each round takes under a millisecond. Before the fix each of
  // 10 runs read a stale copy within these rounds.
  for (uint64_t round = 1; round <= 1000; round++) {
    WriteU64(ca, round);  // a holds it modified
    const uint64_t theirs = 1000000 + round;
    const int delay_us = static_cast<int>(random() % 60);
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      WriteU64(cb, theirs);  // the server flushes a
    });
    // a's write-back, then an access that holds up a flush arriving now
    // while the write-back's answer comes.
    djava_sos_write_back(ca);
    djava_sos_error e{};
    ASSERT_EQ(djava_sos_load(ca, &e), DJAVA_SOS_OK) << e.message;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    djava_sos_release(ca);
    writer.join();
    ASSERT_EQ(ReadU64(ca), theirs) << "a read its own stale copy in round " << round;
  }
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

// A write-back's copy becomes a read copy only with the server's answer,
// and not at all once the JVM has dropped it (its object was collected: a
// new object for the chunk has no bytes yet).
TEST(SosClient, AWriteBacksCopyIsReadableOnlyOnceAcceptedAndNotOnceDropped) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  // Whether a copy readable without a request comes within a second.
  auto readable_soon = [](djava_sos_chunk* c) {
    for (int i = 0; i < 200; i++) {
      if (djava_sos_try_load(c)) {
        djava_sos_release(c);
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  };
  djava_sos_chunk* kept = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(kept, 1);
  ASSERT_EQ(djava_sos_write_back(kept), DJAVA_SOS_OK);
  EXPECT_TRUE(readable_soon(kept)) << "the accepted write-back left no read copy";
  djava_sos_chunk* dropped = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(dropped, 2);
  ASSERT_EQ(djava_sos_write_back(dropped), DJAVA_SOS_OK);
  EXPECT_EQ(djava_sos_drop_copy(dropped, 0), DJAVA_SOS_OK);
  EXPECT_FALSE(readable_soon(dropped)) << "the answer made a dropped copy readable";
  // The server lists this node as a sharer of version 0 (the write-back was
  // accepted; the chunk was never granted exclusively), but its copy went
  // with the orphan: a write must get the bytes, not an upgrade without them.
  djava_sos_stats before{};
  djava_sos_chunk_stats(dropped, &before);
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_lock(dropped, &e), DJAVA_SOS_OK) << e.message;
  uint64_t v = 0;
  std::memcpy(&v, djava_sos_data(dropped), 8);
  djava_sos_release(dropped);
  EXPECT_EQ(v, 2u);
  djava_sos_stats after{};
  djava_sos_chunk_stats(dropped, &after);
  EXPECT_EQ(after.bytes_in, before.bytes_in + 8);  // fetched from home
  EXPECT_EQ(ReadU64(dropped), 2u);
  djava_sos_abandon(a);
}

TEST(SosClient, TryAccessSucceedsOnlyWithTheCopyHereAndNeverAsks) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(ca, 1);
  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  EXPECT_EQ(djava_sos_try_load(cb), 0) << "b has no copy yet";
  EXPECT_EQ(djava_sos_try_lock(cb), 0);
  djava_sos_stats stats{};
  djava_sos_get_stats(b, &stats);
  EXPECT_EQ(stats.misses, 0u) << "a try must not ask the server";
  EXPECT_EQ(ReadU64(cb), 1u);  // b now holds a read copy
  ASSERT_EQ(djava_sos_try_load(cb), 1);
  djava_sos_release(cb);
  EXPECT_EQ(djava_sos_try_lock(cb), 0) << "a read copy is not enough to write";
  ASSERT_EQ(djava_sos_try_lock(ca), 0) << "a shares it now: a write needs the server";
  WriteU64(ca, 2);
  ASSERT_EQ(djava_sos_try_lock(ca), 1);
  djava_sos_release(ca);
  EXPECT_EQ(djava_sos_try_load(cb), 0) << "b's copy was invalidated";
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

TEST(SosClient, ARevocationWaitsForTheAccessInProgress) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(ca, 5);
  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_load(cb, &e), DJAVA_SOS_OK);  // b reads and keeps reading
  std::atomic<bool> released{false};
  std::atomic<bool> locked_before_release{false};
  std::thread writer([&] {
    WriteU64(ca, 6);
    locked_before_release = !released.load();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  uint64_t v;
  std::memcpy(&v, djava_sos_data(cb), 8);
  EXPECT_EQ(v, 5u) << "the bytes changed under a reader";
  released = true;
  djava_sos_release(cb);
  writer.join();
  EXPECT_FALSE(locked_before_release) << "the write did not wait for the read in progress";
  EXPECT_EQ(ReadU64(cb), 6u);
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

struct JvmSide {
  std::map<uint64_t, std::string> objects;  // the bytes "inside Java objects"
  int installs = 0, produces = 0, started = 0;
  std::mutex mu;
};

TEST(SosClient, CallbacksKeepTheBytesInTheJvmsObjects) {
  Server server;
  JvmSide jvm_a, jvm_b;
  djava_sos_callbacks cb{};
  cb.install = [](void* ctx, djava_sos_chunk*, uint64_t id, const djava_sos_meta* meta,
                  const void* bytes, size_t size, char* error, size_t cap) -> int {
    auto* j = static_cast<JvmSide*>(ctx);
    if (meta->class_name == nullptr || std::strcmp(meta->class_name, "Refused") == 0) {
      std::snprintf(error, cap, "no class %s", meta->class_name ? meta->class_name : "(none)");
      return 1;
    }
    std::lock_guard<std::mutex> l(j->mu);
    j->objects[id].assign(static_cast<const char*>(bytes), size);
    j->installs++;
    return 0;
  };
  cb.produce = [](void* ctx, djava_sos_chunk*, uint64_t id, void* buffer,
                  size_t capacity) -> size_t {
    auto* j = static_cast<JvmSide*>(ctx);
    std::lock_guard<std::mutex> l(j->mu);
    const std::string& object = j->objects[id];
    if (object.size() > capacity) return object.size();
    std::memcpy(buffer, object.data(), object.size());
    j->produces++;
    return object.size();
  };
  cb.thread_started = [](void* ctx, const char*) { static_cast<JvmSide*>(ctx)->started++; };
  djava_sos_callbacks cba = cb, cbb = cb;
  cba.context = &jvm_a;
  cbb.context = &jvm_b;
  djava_sos_client* a = server.Connect("a", &cba);
  djava_sos_client* b = server.Connect("b", &cbb);
  djava_sos_meta meta = Meta("Point");
  djava_sos_chunk* ca = djava_sos_alloc(a, 4, &meta, nullptr);
  EXPECT_EQ(djava_sos_data(ca), nullptr) << "the client kept bytes the JVM holds";
  jvm_a.objects[djava_sos_id(ca)] = "abcd";
  djava_sos_chunk* cbk = djava_sos_chunk_for(b, djava_sos_id(ca));
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_load(cbk, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(cbk);
  EXPECT_EQ(jvm_b.objects[djava_sos_id(ca)], "abcd");
  EXPECT_EQ(jvm_a.produces, 1);
  EXPECT_EQ(jvm_b.installs, 1);
  EXPECT_EQ(jvm_a.started, 1);

  // The JVM's encoding grows while a holds it in M: the flush carries the
  // new size, and b installs exactly those bytes.
  ASSERT_EQ(djava_sos_lock(ca, &e), DJAVA_SOS_OK) << e.message;
  jvm_a.objects[djava_sos_id(ca)] = "a longer encoding of the object";
  djava_sos_release(ca);
  ASSERT_EQ(djava_sos_load(cbk, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(cbk);
  EXPECT_EQ(jvm_b.objects[djava_sos_id(ca)], "a longer encoding of the object");
  EXPECT_EQ(djava_sos_size(cbk), 31u);

  djava_sos_meta refused = Meta("Refused");
  djava_sos_chunk* cr = djava_sos_alloc(a, 4, &refused, nullptr);
  jvm_a.objects[djava_sos_id(cr)] = "zzzz";
  djava_sos_chunk* crb = djava_sos_chunk_for(b, djava_sos_id(cr));
  EXPECT_EQ(djava_sos_load(crb, &e), DJAVA_SOS_INSTALL_FAILED);
  EXPECT_NE(std::string(e.message).find("no class Refused"), std::string::npos) << e.message;
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

// A hand-over (djava_sos_hand_over) runs where its thread must not wait: a
// JVM's monitor exit is a leaf call, in Java state, that holds up every
// safepoint. A flush of the same chunk may meanwhile be inside produce,
// holding the chunk, with the JVM's callback waiting for a safepoint to end.
// The hand-over leaves that chunk alone instead of waiting for it (waiting
// was a deadlock of the whole JVM).
TEST(SosClient, AHandOverNeverWaitsForAChunkBeingFlushed) {
  struct StuckJvm {
    std::mutex mu;
    std::condition_variable cv;
    bool in_produce = false, go = false;
  } jvm;
  djava_sos_callbacks cb{};
  cb.context = &jvm;
  cb.install = [](void*, djava_sos_chunk*, uint64_t, const djava_sos_meta*, const void*, size_t,
                  char*, size_t) -> int { return 0; };
  cb.produce = [](void* ctx, djava_sos_chunk*, uint64_t, void* buffer, size_t capacity) -> size_t {
    auto* j = static_cast<StuckJvm*>(ctx);
    std::unique_lock<std::mutex> l(j->mu);
    j->in_produce = true;
    j->cv.notify_all();
    j->cv.wait(l, [j] { return j->go; });  // the JVM's safepoint, say
    if (capacity < 8) return 8;
    std::memset(buffer, 7, 8);
    return 8;
  };
  Server server;
  djava_sos_client* a = server.Connect("a", &cb);
  djava_sos_client* b = server.Connect("b");
  const uint64_t since = djava_sos_exclusive_mark(a);
  djava_sos_meta meta = Meta("Counter");
  djava_sos_chunk* x = djava_sos_alloc(a, 8, &meta, nullptr);
  ASSERT_NE(x, nullptr);
  djava_sos_set_user(x, 1);  // linked to its object
  std::thread reader([&] {
    djava_sos_error e{};
    djava_sos_chunk* xb = djava_sos_chunk_for(b, djava_sos_id(x));
    EXPECT_EQ(djava_sos_load(xb, &e), DJAVA_SOS_OK) << e.message;
    djava_sos_release(xb);
  });
  {
    std::unique_lock<std::mutex> l(jvm.mu);
    ASSERT_TRUE(jvm.cv.wait_for(l, std::chrono::seconds(10), [&] { return jvm.in_produce; }))
        << "b's read never flushed a";
  }
  auto handed = std::async(std::launch::async, [&] {
    uint64_t ids[8];
    return djava_sos_hand_over(a, since, 42, 0, ids, 8);  // Meta's program
  });
  const bool returned = handed.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  {
    std::lock_guard<std::mutex> l(jvm.mu);
    jvm.go = true;
    jvm.cv.notify_all();
  }
  EXPECT_TRUE(returned) << "the hand-over waited for the flush";
  EXPECT_EQ(handed.get(), 0u) << "it handed over the chunk being flushed";
  reader.join();
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

// The JVM's inline writes without a pin (sos_client.h, djava_sos_word): a
// writer announces the state word it stores under, then tests the word; the
// revoker sets BLOCKED, calls quiesce_writers (membarrier, then waits for
// announcers) and only then reads the bytes. Node a increments a "field"
// that way from two threads, node b by lock/release, so a's copy is flushed
// and invalidated again and again under a's stores: a store the flush missed
// would be lost when a fetches the chunk back, and the total would be short.
struct AnnouncingJvm {
  std::atomic<uint64_t> field{0};  // the bytes "inside a Java object"
  std::atomic<volatile uint64_t*> slots[2] = {};  // the writers' announcements
};

TEST(SosClient, AnnouncedWritesAreNeverLostToAFlush) {
  ASSERT_EQ(syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0), 0);
  Server server;
  AnnouncingJvm jvm_a, jvm_b;
  djava_sos_callbacks cb{};
  cb.install = [](void* ctx, djava_sos_chunk*, uint64_t, const djava_sos_meta*,
                  const void* bytes, size_t size, char*, size_t) -> int {
    uint64_t v = 0;
    std::memcpy(&v, bytes, std::min(size, sizeof(v)));
    static_cast<AnnouncingJvm*>(ctx)->field.store(v, std::memory_order_relaxed);
    return 0;
  };
  cb.produce = [](void* ctx, djava_sos_chunk*, uint64_t, void* buffer, size_t capacity) -> size_t {
    if (capacity < 8) return 8;
    uint64_t v = static_cast<AnnouncingJvm*>(ctx)->field.load(std::memory_order_relaxed);
    std::memcpy(buffer, &v, 8);
    return 8;
  };
  cb.quiesce_writers = [](void* ctx, volatile uint64_t* word) {
    auto* j = static_cast<AnnouncingJvm*>(ctx);
    ASSERT_EQ(syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0), 0);
    for (auto& slot : j->slots)
      while (slot.load(std::memory_order_acquire) == word) std::this_thread::yield();
  };
  djava_sos_callbacks cba = cb, cbb = cb;
  cba.context = &jvm_a;
  cbb.context = &jvm_b;
  djava_sos_client* a = server.Connect("a", &cba);
  djava_sos_client* b = server.Connect("b", &cbb);
  djava_sos_meta meta = Meta("Counter");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, &meta, nullptr);
  djava_sos_chunk* cbk = djava_sos_chunk_for(b, djava_sos_id(ca));
  // All three run for the same time, so that the copy moves between the
  // nodes all along (a loop of counted operations would mostly run alone).
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
  std::atomic<uint64_t> increments{0};
  std::atomic<int> inline_writes{0}, failures{0};
  std::mutex a_monitor;  // a's two threads exclude each other, as a Java monitor would
  // The slow path: an access by lock/release.
  auto locked_increment = [&](djava_sos_chunk* c, AnnouncingJvm* jvm) {
    djava_sos_error e{};
    if (djava_sos_lock(c, &e) != DJAVA_SOS_OK) {
      failures++;
      return;
    }
    jvm->field.store(jvm->field.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    djava_sos_release(c);
    increments++;
  };
  auto a_writer = [&](int me) {
    volatile uint64_t* word = djava_sos_word(ca);
    while (std::chrono::steady_clock::now() < until) {
      std::lock_guard<std::mutex> l(a_monitor);
      jvm_a.slots[me].store(word, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      uint64_t w = __atomic_load_n(word, __ATOMIC_ACQUIRE);
      if ((w & (DJAVA_SOS_WORD_STATE_MASK | DJAVA_SOS_WORD_BLOCKED)) == DJAVA_SOS_WORD_STATE_M) {
        // A writer slow between its test and its store (descheduled, say):
        // the revoker must wait for it.
        uint64_t v = jvm_a.field.load(std::memory_order_relaxed);
        for (volatile int spin = 0; spin < 2000; spin = spin + 1) {
        }
        jvm_a.field.store(v + 1, std::memory_order_relaxed);
        jvm_a.slots[me].store(nullptr, std::memory_order_release);
        inline_writes++;
        increments++;
        continue;
      }
      jvm_a.slots[me].store(nullptr, std::memory_order_relaxed);
      locked_increment(ca, &jvm_a);
    }
  };
  std::thread a0(a_writer, 0), a1(a_writer, 1);
  std::thread b0([&] {
    while (std::chrono::steady_clock::now() < until) {
      locked_increment(cbk, &jvm_b);
      // Pauses leave a the copy long enough to write inline in between,
      // even on a loaded machine.
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  a0.join();
  a1.join();
  b0.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(inline_writes.load(), 0) << "no write took the announced path";
  djava_sos_stats moved{};
  djava_sos_chunk_stats(ca, &moved);
  EXPECT_GE(moved.flushes, 10u) << "the copy hardly moved between the nodes";
  djava_sos_client* checker = server.Connect("checker");
  EXPECT_EQ(ReadU64(djava_sos_chunk_for(checker, djava_sos_id(ca))), increments.load());
  djava_sos_abandon(a);
  djava_sos_abandon(b);
  djava_sos_abandon(checker);
}

// A JVM whose bytes reference an object another of its threads holds
// locked cannot produce them until that thread leaves synchronized code.
struct LockedReferentJvm {
  std::atomic<uint64_t> field{0};
  std::atomic<bool> referent_locked{true};
  std::atomic<int> refused{0};
};

TEST(SosClient, AFlushWaitsForItsBytesWhileTheChunkStaysInUse) {
  Server server;
  LockedReferentJvm jvm;
  djava_sos_callbacks cb{};
  cb.context = &jvm;
  cb.install = [](void*, djava_sos_chunk*, uint64_t, const djava_sos_meta*, const void*, size_t,
                  char*, size_t) -> int { return 0; };
  cb.produce = [](void* ctx, djava_sos_chunk*, uint64_t, void* buffer, size_t capacity) -> size_t {
    auto* j = static_cast<LockedReferentJvm*>(ctx);
    if (j->referent_locked.load()) {
      j->refused++;
      return DJAVA_SOS_PRODUCE_LATER;
    }
    if (capacity < 8) return 8;
    uint64_t v = j->field.load();
    std::memcpy(buffer, &v, 8);
    return 8;
  };
  djava_sos_client* a = server.Connect("a", &cb);
  djava_sos_client* b = server.Connect("b");
  djava_sos_meta meta = Meta("Holder");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, &meta, nullptr);
  jvm.field = 1;
  std::atomic<bool> read_done{false};
  std::atomic<uint64_t> seen{0};
  std::thread reader([&] {
    seen = ReadU64(djava_sos_chunk_for(b, djava_sos_id(ca)));
    read_done = true;
  });
  // While the flush waits, the owner's threads keep using the chunk (one of
  // them is the lock holder the JVM waits for).
  for (int i = 0; i < 200 && jvm.refused.load() < 3; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GE(jvm.refused.load(), 3) << "produce was not asked again";
  for (int i = 0; i < 50; i++) {
    djava_sos_error e{};
    ASSERT_EQ(djava_sos_lock(ca, &e), DJAVA_SOS_OK) << e.message;
    jvm.field = jvm.field + 1;
    djava_sos_release(ca);
  }
  EXPECT_FALSE(read_done.load()) << "the reader got bytes that were never produced";
  jvm.referent_locked = false;  // the holder leaves synchronized code
  reader.join();
  EXPECT_EQ(seen.load(), 51u) << "the reader must see every write made while it waited";
  djava_sos_stats stats{};
  djava_sos_get_stats(a, &stats);
  EXPECT_GE(stats.deferred_flushes, 3u);
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

// The JVM says when what held a flush back is over (its fence completed):
// the flush goes at once, not after the retry thread's back-off, which has
// grown to 64 ms after a run of refusals.
TEST(SosClient, AFlushPutOffIsRetriedAtOnceWhenTheJvmAsks) {
  Server server;
  struct Jvm {
    std::atomic<bool> ready{false};
    std::atomic<int> refused{0};
    std::atomic<int64_t> produced_ns{0};
  } jvm;
  djava_sos_callbacks cb{};
  cb.context = &jvm;
  cb.install = [](void*, djava_sos_chunk*, uint64_t, const djava_sos_meta*, const void*, size_t,
                  char*, size_t) -> int { return 0; };
  cb.produce = [](void* ctx, djava_sos_chunk*, uint64_t, void* buffer, size_t capacity) -> size_t {
    auto* j = static_cast<Jvm*>(ctx);
    if (!j->ready.load()) {
      j->refused++;
      return DJAVA_SOS_PRODUCE_LATER;
    }
    if (capacity < 8) return 8;
    j->produced_ns = std::chrono::steady_clock::now().time_since_epoch().count();
    uint64_t v = 77;
    std::memcpy(buffer, &v, 8);
    return 8;
  };
  djava_sos_client* a = server.Connect("a", &cb);
  djava_sos_client* b = server.Connect("b");
  djava_sos_meta meta = Meta("Holder");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, &meta, nullptr);
  std::atomic<uint64_t> seen{0};
  std::thread reader([&] { seen = ReadU64(djava_sos_chunk_for(b, djava_sos_id(ca))); });
  // Back-offs of 1, 2, 4, ... 64 ms: after nine refusals the next is 64 ms away.
  for (int i = 0; i < 2000 && jvm.refused.load() < 9; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_GE(jvm.refused.load(), 9) << "produce was not asked again";
  jvm.ready = true;
  const int64_t asked_ns = std::chrono::steady_clock::now().time_since_epoch().count();
  djava_sos_retry_deferred(a);
  reader.join();
  EXPECT_EQ(seen.load(), 77u);
  const double waited_ms = (jvm.produced_ns.load() - asked_ns) / 1e6;
  EXPECT_LT(waited_ms, 30.0) << "the retry waited out its back-off";
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

// A JVM whose replica of a read copy was collected drops the copy: the next
// access fetches the bytes again, and the server's invalidate of the dropped
// copy is still answered. A modified copy is never dropped.
TEST(SosClient, ADroppedReadCopyIsFetchedAgainAndAModifiedOneIsKept) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(ca, 5);
  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  EXPECT_EQ(ReadU64(cb), 5u);
  djava_sos_stats before{};
  djava_sos_chunk_stats(cb, &before);
  EXPECT_EQ(djava_sos_drop_copy(cb, 0), DJAVA_SOS_OK);
  EXPECT_EQ(ReadU64(cb), 5u);
  djava_sos_stats after{};
  djava_sos_chunk_stats(cb, &after);
  EXPECT_EQ(after.misses, before.misses + 1) << "the dropped copy was read without a fetch";
  EXPECT_EQ(djava_sos_drop_copy(cb, 0), DJAVA_SOS_OK);
  WriteU64(ca, 6);  // invalidates b's copy, which is already gone
  EXPECT_EQ(ReadU64(cb), 6u);
  // A new owner (the JVM's next replica) since the caller looked: its copy stays.
  djava_sos_set_user(cb, 42);
  EXPECT_EQ(djava_sos_drop_copy(cb, 0), DJAVA_SOS_IN_USE);
  djava_sos_stats kept{};
  djava_sos_chunk_stats(cb, &kept);
  EXPECT_EQ(ReadU64(cb), 6u);
  djava_sos_stats read_again{};
  djava_sos_chunk_stats(cb, &read_again);
  EXPECT_EQ(read_again.misses, kept.misses) << "the new owner's copy was dropped";
  EXPECT_EQ(djava_sos_drop_copy(cb, 42), DJAVA_SOS_OK);
  WriteU64(cb, 7);
  EXPECT_EQ(djava_sos_drop_copy(cb, 42), DJAVA_SOS_IN_USE);
  EXPECT_EQ(ReadU64(ca), 7u);
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

TEST(SosClient, ADiscardedChunkIsForgottenWithoutAMessage) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_chunk* c = djava_sos_alloc(a, 8, nullptr, nullptr);
  djava_sos_discard(c);
  djava_sos_error e{};
  EXPECT_EQ(djava_sos_load(c, &e), DJAVA_SOS_FREED);
  djava_sos_abandon(a);
}

TEST(SosClient, AnEndedProgramsIdleHandlesAreForgottenAndTheRestStay) {
  // A thread server's client meets chunks of many programs: when one ends,
  // the JVM lets go of its objects and the client of their handles, but for
  // those the JVM names as still referenced and those in use.
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_meta ended = Meta("Item");  // program 42
  djava_sos_meta other = Meta("Item");
  other.program = 43;
  djava_sos_chunk* x = djava_sos_alloc(a, 8, &ended, nullptr);
  djava_sos_chunk* kept = djava_sos_alloc(a, 8, &ended, nullptr);
  djava_sos_chunk* busy = djava_sos_alloc(a, 8, &ended, nullptr);
  djava_sos_chunk* z = djava_sos_alloc(a, 8, &other, nullptr);
  djava_sos_chunk* chunks[] = {x, kept, busy, z};
  djava_sos_chunk* at_b[4];
  for (int i = 0; i < 4; i++) {
    WriteU64(chunks[i], 10 + i);
    at_b[i] = djava_sos_chunk_for(b, djava_sos_id(chunks[i]));
    EXPECT_EQ(ReadU64(at_b[i]), 10u + i);
  }
  // A handle the JVM made for a reference whose bytes it never fetched: no
  // class here, so only the JVM's list names its program.
  djava_sos_chunk* stub = djava_sos_chunk_for(b, djava_sos_id(z) + 1000);
  EXPECT_EQ(djava_sos_handle_count(b), 5u);
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_load(at_b[2], &e), DJAVA_SOS_OK) << e.message;  // an access in progress
  EXPECT_EQ(djava_sos_forget_program(b, 0, nullptr, 0, nullptr, 0), 0u) << "0 is no program";
  EXPECT_EQ(djava_sos_forget_program(b, 42, &at_b[1], 1, &stub, 1), 2u) << "x and the stub go";
  djava_sos_release(at_b[2]);
  EXPECT_EQ(djava_sos_handle_count(b), 3u);
  // b's copy of x is invalidated with no handle for it there: the
  // acknowledgement comes all the same, and a new handle reads the bytes.
  WriteU64(x, 99);
  djava_sos_chunk* again = djava_sos_chunk_for(b, djava_sos_id(x));
  EXPECT_EQ(ReadU64(again), 99u);
  EXPECT_EQ(ReadU64(at_b[1]), 11u);
  EXPECT_EQ(ReadU64(at_b[2]), 12u);
  EXPECT_EQ(ReadU64(at_b[3]), 13u);
  // The memory goes after the grace period, at the receiver's next message.
  djava_sos_stats stats{};
  djava_sos_get_stats(b, &stats);
  EXPECT_EQ(stats.handles_freed, 0u) << "freed within the grace period";
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  WriteU64(z, 14);  // b's copy invalidated: a message to b
  EXPECT_EQ(ReadU64(at_b[3]), 14u);
  djava_sos_get_stats(b, &stats);
  EXPECT_EQ(stats.handles_freed, 2u);
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

TEST(SosClient, PrefetchedChunksLoadWithoutAnotherRequest) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  std::vector<uint64_t> ids;
  for (int i = 0; i < 20; i++) {
    djava_sos_chunk* c = djava_sos_alloc(a, 8, nullptr, nullptr);
    WriteU64(c, 100 + i);
    ids.push_back(djava_sos_id(c));
  }
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_prefetch(b, ids.data(), ids.size(), &e), DJAVA_SOS_OK) << e.message;
  for (int i = 0; i < 20; i++) EXPECT_EQ(ReadU64(djava_sos_chunk_for(b, ids[i])), 100u + i);
  djava_sos_stats stats{};
  djava_sos_get_stats(b, &stats);
  EXPECT_EQ(stats.misses, 20u) << "a prefetched chunk was asked for again";
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

TEST(SosClient, AnExclusivePrefetchGrantsWritesWithoutAnotherRequest) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_client* c = server.Connect("c");
  std::vector<uint64_t> ids;
  for (int i = 0; i < 8; i++) {
    djava_sos_chunk* chunk = djava_sos_alloc(a, 8, nullptr, nullptr);
    WriteU64(chunk, 100 + i);
    ids.push_back(djava_sos_id(chunk));
  }
  // b reads the first half (read copies: its exclusive prefetch upgrades
  // them without bytes), c reads the second (the server invalidates c).
  for (int i = 0; i < 4; i++) EXPECT_EQ(ReadU64(djava_sos_chunk_for(b, ids[i])), 100u + i);
  for (int i = 4; i < 8; i++) EXPECT_EQ(ReadU64(djava_sos_chunk_for(c, ids[i])), 100u + i);
  djava_sos_stats before{}, after{};
  djava_sos_get_stats(b, &before);
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_prefetch_exclusive(b, ids.data(), ids.size(), &e), DJAVA_SOS_OK)
      << e.message;
  for (int i = 0; i < 8; i++) WriteU64(djava_sos_chunk_for(b, ids[i]), 200 + i);
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses - before.misses, 8u) << "a chunk prefetched for writing was asked for again";
  EXPECT_EQ(after.upgrades - before.upgrades, 4u);
  EXPECT_EQ(after.bytes_in - before.bytes_in, 4 * 8u) << "the upgrades carried bytes";
  for (int i = 0; i < 8; i++) {
    EXPECT_EQ(ReadU64(djava_sos_chunk_for(a, ids[i])), 200u + i);
    EXPECT_EQ(ReadU64(djava_sos_chunk_for(c, ids[i])), 200u + i);
  }
  // Chunks held in M already are not asked for again.
  djava_sos_chunk* mine = djava_sos_alloc(b, 8, nullptr, nullptr);
  uint64_t id = djava_sos_id(mine);
  djava_sos_get_stats(b, &before);
  ASSERT_EQ(djava_sos_prefetch_exclusive(b, &id, 1, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses, before.misses);
  djava_sos_abandon(a);
  djava_sos_abandon(b);
  djava_sos_abandon(c);
}

TEST(SosClient, AWindowPrefetchAsksOnlyForABatch) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  std::vector<uint64_t> ids;
  for (int i = 0; i < 16; i++) {
    djava_sos_chunk* chunk = djava_sos_alloc(a, 8, nullptr, nullptr);
    WriteU64(chunk, 100 + i);
    ids.push_back(djava_sos_id(chunk));
  }
  djava_sos_error e{};
  djava_sos_stats before{}, after{};
  // The first half asked for, as a scan's first frame would.
  ASSERT_EQ(djava_sos_prefetch(b, ids.data(), 8, &e), DJAVA_SOS_OK) << e.message;
  // A window over ids 1..12: 4 still to ask, fewer than a batch of 8, and
  // ids[1] asked already: nothing goes.
  djava_sos_get_stats(b, &before);
  ASSERT_EQ(djava_sos_prefetch_window(b, ids.data() + 1, 12, 0, 8, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses, before.misses) << "a frame for fewer than a batch";
  // Over ids 4..15: 8 to ask, a batch: all of them go.
  ASSERT_EQ(djava_sos_prefetch_window(b, ids.data() + 4, 12, 0, 8, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses - before.misses, 8u);
  for (int i = 0; i < 16; i++) EXPECT_EQ(ReadU64(djava_sos_chunk_for(b, ids[i])), 100u + i);
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses - before.misses, 8u) << "a chunk of the window was asked for again";
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

TEST(SosClient, AFirstWritesPrefetchLeavesWhatAnotherNodeWroteWhereItIs) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_client* c = server.Connect("c");
  std::vector<uint64_t> ids;
  for (int i = 0; i < 8; i++) {
    djava_sos_chunk* chunk = djava_sos_alloc(a, 8, nullptr, nullptr);
    WriteU64(chunk, 100 + i);
    ids.push_back(djava_sos_id(chunk));
  }
  // c writes the second half: they are c's, modified there.
  for (int i = 4; i < 8; i++) WriteU64(djava_sos_chunk_for(c, ids[i]), 300 + i);
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_prefetch_first_writes(b, ids.data(), ids.size(), &e), DJAVA_SOS_OK)
      << e.message;
  for (int i = 0; i < 400 && server.service().DirectoryStatistics().declined < 4; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(server.service().DirectoryStatistics().declined, 4u);
  // c still holds what it wrote: writing it again asks for nothing.
  djava_sos_stats before{}, after{};
  djava_sos_get_stats(c, &before);
  for (int i = 4; i < 8; i++) WriteU64(djava_sos_chunk_for(c, ids[i]), 400 + i);
  djava_sos_get_stats(c, &after);
  EXPECT_EQ(after.misses, before.misses) << "the prefetch took a chunk c had written";
  // b writes all of them: the first half came with the prefetch, the
  // declined half is asked for by b's writes themselves.
  djava_sos_get_stats(b, &before);
  for (int i = 0; i < 8; i++) WriteU64(djava_sos_chunk_for(b, ids[i]), 200 + i);
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses - before.misses, 4u);
  for (int i = 0; i < 8; i++) {
    EXPECT_EQ(ReadU64(djava_sos_chunk_for(a, ids[i])), 200u + i);
    EXPECT_EQ(ReadU64(djava_sos_chunk_for(c, ids[i])), 200u + i);
  }
  djava_sos_abandon(a);
  djava_sos_abandon(b);
  djava_sos_abandon(c);
}

TEST(SosClient, DirtyChunksOfACrashedNodeAreLostAndSaySo) {
  Server server;
  djava_sos_client* a = server.Connect("victim:1234");
  djava_sos_client* b = server.Connect("b");
  djava_sos_chunk* shared = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(shared, 7);
  djava_sos_chunk* bs = djava_sos_chunk_for(b, djava_sos_id(shared));
  EXPECT_EQ(ReadU64(bs), 7u);              // written home, both share it
  djava_sos_chunk* dirty = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(dirty, 8);                      // never left a
  WriteU64(shared, 9);                     // modified again at a only
  const uint64_t dirty_id = djava_sos_id(dirty), shared_id = djava_sos_id(shared);
  djava_sos_abandon(a);
  djava_sos_error e{};
  for (uint64_t id : {dirty_id, shared_id}) {
    djava_sos_chunk* c = djava_sos_chunk_for(b, id);
    // The server may not have noticed the death yet: wait until it has.
    djava_sos_status s = DJAVA_SOS_OK;
    for (int i = 0; i < 100; i++) {
      s = djava_sos_load(c, &e);
      if (s != DJAVA_SOS_OK) break;
      djava_sos_release(c);
      FAIL() << "read a chunk whose only current copy died";
    }
    EXPECT_EQ(s, DJAVA_SOS_LOST) << e.message;
    EXPECT_NE(std::string(e.message).find("victim:1234"), std::string::npos) << e.message;
  }
  // The server keeps serving.
  djava_sos_chunk* fresh = djava_sos_alloc(b, 8, nullptr, nullptr);
  WriteU64(fresh, 1);
  djava_sos_client* c = server.Connect("c");
  EXPECT_EQ(ReadU64(djava_sos_chunk_for(c, djava_sos_id(fresh))), 1u);
  djava_sos_abandon(b);
  djava_sos_abandon(c);
}

// A server whose collector never runs: a test whose only holder of a chunk
// goes before another node reads it (the collector may free such a chunk,
// which nothing names, in between).
SosService::Options WithoutCollector() {
  SosService::Options o;
  o.collect_check_ms = 0;
  return o;
}

TEST(SosClient, CloseWritesEveryModifiedChunkBack) {
  Server server(WithoutCollector());
  djava_sos_client* a = server.Connect("a");
  std::vector<uint64_t> ids;
  for (int i = 0; i < 10; i++) {
    djava_sos_chunk* c = djava_sos_alloc(a, 8, nullptr, nullptr);
    WriteU64(c, 1000 + i);
    ids.push_back(djava_sos_id(c));
  }
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_close(a, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_client* b = server.Connect("b");
  for (int i = 0; i < 10; i++) EXPECT_EQ(ReadU64(djava_sos_chunk_for(b, ids[i])), 1000u + i);
  djava_sos_abandon(b);
}

// djava_sos_leave: what a halting JVM does while its other threads may still
// hold handles. Modified chunks are written back; afterwards the handles
// stay valid and every access, even of a cached copy, fails.
TEST(SosClient, LeaveWritesBackAndThenEveryAccessFails) {
  Server server(WithoutCollector());
  djava_sos_client* a = server.Connect("a");
  djava_sos_chunk* c = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(c, 42);
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_leave(a, &e), DJAVA_SOS_OK) << e.message;
  EXPECT_EQ(djava_sos_try_load(c), 0);
  EXPECT_EQ(djava_sos_load(c, &e), DJAVA_SOS_DISCONNECTED);
  EXPECT_NE(std::string(e.message).find("left the cluster"), std::string::npos) << e.message;
  EXPECT_EQ(djava_sos_lock(c, &e), DJAVA_SOS_DISCONNECTED);
  djava_sos_client* b = server.Connect("b");
  EXPECT_EQ(ReadU64(djava_sos_chunk_for(b, djava_sos_id(c))), 42u);
  djava_sos_abandon(b);
  djava_sos_abandon(a);
}

TEST(SosClient, FreeIsRefusedWhileSharedAndFinalAfterwards) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(ca, 1);
  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  EXPECT_EQ(ReadU64(cb), 1u);
  djava_sos_error e{};
  EXPECT_EQ(djava_sos_free(ca, &e), DJAVA_SOS_IN_USE) << e.message;
  WriteU64(cb, 2);  // b alone holds it now
  EXPECT_EQ(djava_sos_free(cb, &e), DJAVA_SOS_OK) << e.message;
  EXPECT_EQ(djava_sos_load(ca, &e), DJAVA_SOS_FREED) << e.message;
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

TEST(SosClient, AfterTheServerIsGoneEvenCachedReadsFail) {
  auto server = std::make_unique<Server>();
  djava_sos_client* a = server->Connect("a");
  djava_sos_chunk* c = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(c, 1);
  server->Stop();
  djava_sos_error e{};
  djava_sos_status s = DJAVA_SOS_OK;
  for (int i = 0; i < 200 && s == DJAVA_SOS_OK; i++) {
    s = djava_sos_load(c, &e);
    if (s == DJAVA_SOS_OK) {
      djava_sos_release(c);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  EXPECT_EQ(s, DJAVA_SOS_DISCONNECTED);
  djava_sos_abandon(a);
}

TEST(SosClient, ChunksAboveTheLimitAreRefusedAtAlloc) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_error e{};
  EXPECT_EQ(djava_sos_alloc(a, 64u << 20, nullptr, &e), nullptr);
  EXPECT_EQ(e.status, DJAVA_SOS_TOO_LARGE);
  djava_sos_abandon(a);
}

TEST(SosClient, WrongSecretIsRefused) {
  Server server;
  char path[] = "/tmp/sos-wrong-secret-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "not the cluster secret at all", 29), 29);
  close(fd);
  djava_sos_config config{server.address().c_str(), path, "intruder", nullptr};
  djava_sos_client* c = nullptr;
  djava_sos_error e{};
  EXPECT_EQ(djava_sos_connect(&config, &c, &e), DJAVA_SOS_DISCONNECTED);
  EXPECT_NE(std::string(e.message).find("auth"), std::string::npos) << e.message;
  unlink(path);
}

// Counters only ever incremented under write access, by several threads of
// several nodes over few chunks: the totals are exact, the two words of a
// chunk are always equal (no torn or mixed copy), and no thread ever reads a
// value below one it saw before. Write access excludes other nodes, not the
// node's own threads (as in Java, those synchronize among themselves): a
// node-local mutex per chunk stands for the Java monitor a program would use.
// The last release of an access whose revocation waited for it runs that
// revocation, under the chunk's mutex. A JVM thread must not wait for that
// mutex (its holder may be a flush waiting for the JVM's safepoint, which
// waits for this thread), so when another thread holds it the client's
// retry thread finishes the release. Here a thread keeps taking the mutex
// (reading the chunk's counters) while writers and a remote reader make
// revocations wait for releases: every increment still arrives.
TEST(SosClient, AReleaseWhoseChunkIsBusyIsFinishedByTheClient) {
  Server server;
  djava_sos_client* a = server.Connect("a");
  djava_sos_client* b = server.Connect("b");
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, nullptr, nullptr);
  WriteU64(ca, 0);
  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  std::atomic<bool> done{false};
  std::thread busy([&] {
    while (!done.load()) {
      djava_sos_stats s{};
      djava_sos_chunk_stats(ca, &s);  // holds the chunk's mutex
    }
  });
  constexpr int kWriters = 3;
  std::mutex local_monitor;  // the JVM's own lock for writers of one node
  std::atomic<uint64_t> increments{0};
  std::vector<std::thread> writers;
  // Until a few releases met the busy chunk (usually within milliseconds).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int t = 0; t < kWriters; t++) {
    writers.emplace_back([&] {
      for (int op = 0; std::chrono::steady_clock::now() < deadline; op++) {
        djava_sos_stats s{};
        djava_sos_get_stats(a, &s);
        if (s.releases_handed_off >= 3 && op >= 300) break;
        std::lock_guard<std::mutex> monitor(local_monitor);
        djava_sos_error e{};
        ASSERT_EQ(djava_sos_lock(ca, &e), DJAVA_SOS_OK) << e.message;
        uint64_t v;
        std::memcpy(&v, djava_sos_data(ca), 8);
        v++;
        std::memcpy(djava_sos_data(ca), &v, 8);
        djava_sos_release(ca);
        increments++;
      }
    });
  }
  std::thread reader([&] {
    uint64_t last = 0;
    while (!done.load()) {
      uint64_t v = ReadU64(cb);
      EXPECT_GE(v, last) << "a read went back in time";
      last = v;
    }
  });
  for (std::thread& w : writers) w.join();
  done = true;
  reader.join();
  busy.join();
  EXPECT_EQ(ReadU64(cb), increments.load());
  djava_sos_stats s{};
  djava_sos_get_stats(a, &s);
  EXPECT_GT(s.releases_handed_off, 0u) << "no release met a busy chunk: the test proved nothing";
  djava_sos_abandon(a);
  djava_sos_abandon(b);
}

TEST(SosClient, ConcurrentIncrementsAreCoherent) {
  Server server;
  constexpr int kNodes = 3, kThreads = 3, kChunks = 3, kOps = 400;
  std::vector<djava_sos_client*> nodes;
  for (int n = 0; n < kNodes; n++) nodes.push_back(server.Connect(("n" + std::to_string(n)).c_str()));
  std::vector<uint64_t> ids;
  for (int i = 0; i < kChunks; i++) ids.push_back(djava_sos_id(djava_sos_alloc(nodes[0], 16, nullptr, nullptr)));
  const unsigned seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::atomic<uint64_t> increments[kChunks] = {};
  std::atomic<int> violations{0};
  std::mutex local_monitor[kNodes][kChunks];
  std::vector<std::thread> threads;
  for (int n = 0; n < kNodes; n++) {
    for (int t = 0; t < kThreads; t++) {
      threads.emplace_back([&, n, t] {
        std::mt19937 rng(seed + n * 100 + t);
        uint64_t seen[kChunks] = {};
        for (int op = 0; op < kOps; op++) {
          int k = rng() % kChunks;
          djava_sos_chunk* c = djava_sos_chunk_for(nodes[n], ids[k]);
          djava_sos_error e{};
          bool write = rng() % 2;
          std::lock_guard<std::mutex> monitor(local_monitor[n][k]);
          if ((write ? djava_sos_lock(c, &e) : djava_sos_load(c, &e)) != DJAVA_SOS_OK) {
            violations++;
            continue;
          }
          uint64_t w[2];
          std::memcpy(w, djava_sos_data(c), 16);
          if (w[0] != w[1] || w[0] < seen[k]) violations++;
          if (write) {
            w[0]++;
            w[1] = w[0];
            std::memcpy(djava_sos_data(c), w, 16);
          }
          djava_sos_release(c);
          seen[k] = w[0];
          if (write) increments[k]++;
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  djava_sos_client* checker = server.Connect("checker");
  for (int k = 0; k < kChunks; k++) {
    djava_sos_chunk* c = djava_sos_chunk_for(checker, ids[k]);
    EXPECT_EQ(ReadU64(c), increments[k].load()) << "chunk " << k;
    EXPECT_EQ(ReadU64(c, 8), increments[k].load()) << "chunk " << k;
  }
  for (auto* n : nodes) djava_sos_abandon(n);
  djava_sos_abandon(checker);
}

// A JVM side for the collector's test: objects' bytes, and the ids each
// object's bytes name, which produce reports.
struct RefsJvm {
  std::map<uint64_t, std::string> objects;
  std::map<uint64_t, std::vector<uint64_t>> refs;
  std::set<uint64_t> not_ready;  // produce says "later" (a JVM's fence running)
  std::mutex mu;
};

djava_sos_callbacks RefsCallbacks(RefsJvm* jvm) {
  djava_sos_callbacks cb{};
  cb.context = jvm;
  cb.install = [](void* ctx, djava_sos_chunk*, uint64_t id, const djava_sos_meta*,
                  const void* bytes, size_t size, char*, size_t) -> int {
    auto* j = static_cast<RefsJvm*>(ctx);
    std::lock_guard<std::mutex> l(j->mu);
    j->objects[id].assign(static_cast<const char*>(bytes), size);
    return 0;
  };
  cb.produce = [](void* ctx, djava_sos_chunk* chunk, uint64_t id, void* buffer,
                  size_t capacity) -> size_t {
    auto* j = static_cast<RefsJvm*>(ctx);
    std::lock_guard<std::mutex> l(j->mu);
    if (j->not_ready.count(id) != 0) return DJAVA_SOS_PRODUCE_LATER;
    const std::string& object = j->objects[id];
    if (object.size() > capacity) return object.size();
    std::memcpy(buffer, object.data(), object.size());
    const std::vector<uint64_t>& refs = j->refs[id];
    djava_sos_produced_refs(chunk, refs.data(), refs.size(), nullptr, nullptr, 0);
    return object.size();
  };
  return cb;
}

// Waits (bounded) until the server has collected `n` chunks in all.
bool CollectedAtLeast(Server& server, uint64_t n) {
  for (int i = 0; i < 400; i++) {
    if (server.service().DirectoryStatistics().collected >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(SosClient, ChunksNoNodeHoldsAreFreedAndReadsOfThemFailNamingTheCollector) {
  Server server;
  RefsJvm jvm_a, jvm_b, jvm_c;
  djava_sos_callbacks cba = RefsCallbacks(&jvm_a), cbb = RefsCallbacks(&jvm_b),
                      cbc = RefsCallbacks(&jvm_c);
  djava_sos_client* a = server.Connect("a", &cba);
  djava_sos_client* b = server.Connect("b", &cbb);
  djava_sos_client* c = server.Connect("c", &cbc);
  djava_sos_meta meta = Meta("Node");
  djava_sos_chunk* x = djava_sos_alloc(a, 4, &meta, nullptr);
  djava_sos_chunk* y = djava_sos_alloc(a, 4, &meta, nullptr);
  const uint64_t xid = djava_sos_id(x), yid = djava_sos_id(y);
  jvm_a.objects[xid] = "xxxx";
  jvm_a.objects[yid] = "yyyy";
  jvm_a.refs[xid] = {yid};  // x names y
  djava_sos_error e{};
  // b reads x: the grant ships y's id to b too.
  djava_sos_chunk* bx = djava_sos_chunk_for(b, xid);
  ASSERT_EQ(djava_sos_load(bx, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(bx);
  // c reads y and lets go of it; so does its creator.
  djava_sos_chunk* cy = djava_sos_chunk_for(c, yid);
  ASSERT_EQ(djava_sos_load(cy, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(cy);
  djava_sos_unreferenced(cy);
  djava_sos_unreferenced(y);
  djava_sos_unreferenced(x);
  // b still holds x (and through it, y): nothing is collected.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(server.service().DirectoryStatistics().collected, 0u);
  djava_sos_stats stats{};
  djava_sos_get_stats(c, &stats);
  EXPECT_EQ(stats.chunks_released, 1u);
  EXPECT_EQ(djava_sos_handle_count(c), 0u) << "c forgot the handle it released";
  djava_sos_chunk* cy2 = djava_sos_chunk_for(c, yid);
  ASSERT_EQ(djava_sos_load(cy2, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(cy2);
  djava_sos_unreferenced(cy2);
  // b lets go of x, and of y, which it never had an object for.
  djava_sos_unreferenced(bx);
  djava_sos_chunk* by = djava_sos_chunk_for(b, yid);
  djava_sos_unreferenced(by);
  ASSERT_TRUE(CollectedAtLeast(server, 2)) << server.service().Stats();
  djava_sos_chunk* cy3 = djava_sos_chunk_for(c, yid);
  EXPECT_EQ(djava_sos_load(cy3, &e), DJAVA_SOS_FREED);
  EXPECT_NE(std::string(e.message).find("distributed garbage collector"), std::string::npos)
      << e.message;
  EXPECT_NE(std::string(e.message).find("Node"), std::string::npos) << e.message;
  djava_sos_abandon(c);
  djava_sos_abandon(b);
  djava_sos_abandon(a);
}

// Nodes a and b; a made x and y, x names y, and nobody else has had
// either (linked to their objects, as the JVM does once it made them
// shared). y_ready: whether a's JVM can produce y at once.
struct MadeXNamingY {
  RefsJvm jvm_a, jvm_b;
  djava_sos_callbacks cba, cbb;
  djava_sos_client* a;
  djava_sos_client* b;
  djava_sos_chunk* ax;
  djava_sos_chunk* ay;
  uint64_t xid, yid;

  MadeXNamingY(Server& server, bool y_ready)
      : cba(RefsCallbacks(&jvm_a)), cbb(RefsCallbacks(&jvm_b)) {
    a = server.Connect("a", &cba);
    b = server.Connect("b", &cbb);
    djava_sos_meta meta = Meta("Node");
    ax = djava_sos_alloc(a, 4, &meta, nullptr);
    ay = djava_sos_alloc(a, 4, &meta, nullptr);
    xid = djava_sos_id(ax);
    yid = djava_sos_id(ay);
    std::lock_guard<std::mutex> l(jvm_a.mu);
    jvm_a.objects[xid] = "xxxx";
    jvm_a.objects[yid] = "yyyy";
    jvm_a.refs[xid] = {yid};
    if (!y_ready) jvm_a.not_ready.insert(yid);
    djava_sos_set_user(ax, 1);
    djava_sos_set_user(ay, 2);
  }
  ~MadeXNamingY() {
    djava_sos_abandon(b);
    djava_sos_abandon(a);
  }
};

// b reads x; y comes along, granted to b unasked (clean) and not installed.
void BReadsXAndGetsYAlong(Server& server, MadeXNamingY& m) {
  djava_sos_error e{};
  djava_sos_chunk* bx = djava_sos_chunk_for(m.b, m.xid);
  ASSERT_EQ(djava_sos_load(bx, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(bx);
  for (int i = 0; i < 400 && server.service().DirectoryStatistics().pushes_along < 1; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(server.service().DirectoryStatistics().pushes_along, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the grant on b's connection
}

// New objects travel with the one that names them (docs/SOS.md): a made x
// and y, x names y, and nobody else has had either. When b's read of x has
// a flush x, a writes y home with it and the server grants y to b unasked:
// b then reads y with no request of its own, and a's copy is gone (a asks
// for y again). With the server's objects_along off, y still goes home
// with the flush, but b has to ask for it.
void NewObjectGoesAlong(bool objects_along) {
  SosService::Options options;
  options.objects_along = objects_along;
  Server server(options);
  MadeXNamingY m(server, true);
  RefsJvm& jvm_b = m.jvm_b;
  djava_sos_client *a = m.a, *b = m.b;
  djava_sos_chunk* ay = m.ay;
  const uint64_t xid = m.xid, yid = m.yid;
  djava_sos_error e{};
  djava_sos_chunk* bx = djava_sos_chunk_for(b, xid);
  ASSERT_EQ(djava_sos_load(bx, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(bx);
  {
    std::lock_guard<std::mutex> l(jvm_b.mu);
    EXPECT_EQ(jvm_b.objects[xid], "xxxx");
  }
  // y's grant follows x's; until it has arrived, a load of y would ask.
  const uint64_t expected_along = objects_along ? 1 : 0;
  for (int i = 0; i < 400 && server.service().DirectoryStatistics().pushes_along < expected_along;
       i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(server.service().DirectoryStatistics().pushes_along, expected_along);
  EXPECT_EQ(server.service().DirectoryStatistics().written_back, 1u) << "y went home with x";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the grant on b's connection
  djava_sos_stats before{};
  djava_sos_get_stats(b, &before);
  djava_sos_chunk* by = djava_sos_chunk_for(b, yid);
  ASSERT_EQ(djava_sos_load(by, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(by);
  {
    std::lock_guard<std::mutex> l(jvm_b.mu);
    EXPECT_EQ(jvm_b.objects[yid], "yyyy");
  }
  djava_sos_stats after{};
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses - before.misses, objects_along ? 0u : 1u);
  // a wrote y home and kept no copy: its next read asks.
  djava_sos_stats a_before{};
  djava_sos_get_stats(a, &a_before);
  ASSERT_EQ(djava_sos_load(ay, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(ay);
  djava_sos_stats a_after{};
  djava_sos_get_stats(a, &a_after);
  EXPECT_EQ(a_after.misses - a_before.misses, 1u);
}

TEST(SosClient, ANewObjectTravelsWithTheChunkThatNamesIt) { NewObjectGoesAlong(true); }

// The same when y cannot leave yet at x's flush (its JVM's publication
// fence is still running): x's reply names it and goes at once; a's retry
// thread writes y home once its produce can, and the server then grants
// it to b, which never asks for it.
TEST(SosClient, ANewObjectNotReadyYetFollowsTheChunkThatNamesIt) {
  Server server;
  MadeXNamingY m(server, false);
  RefsJvm &jvm_a = m.jvm_a, &jvm_b = m.jvm_b;
  djava_sos_client *a = m.a, *b = m.b;
  const uint64_t xid = m.xid, yid = m.yid;
  djava_sos_error e{};
  djava_sos_chunk* bx = djava_sos_chunk_for(b, xid);
  ASSERT_EQ(djava_sos_load(bx, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(bx);
  EXPECT_EQ(server.service().DirectoryStatistics().pushes_along, 0u);
  {
    std::lock_guard<std::mutex> l(jvm_a.mu);
    jvm_a.not_ready.clear();  // the fence is done
  }
  djava_sos_retry_deferred(a);
  for (int i = 0; i < 400 && server.service().DirectoryStatistics().pushes_along < 1; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(server.service().DirectoryStatistics().pushes_along, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the grant on b's connection
  djava_sos_stats before{};
  djava_sos_get_stats(b, &before);
  djava_sos_chunk* by = djava_sos_chunk_for(b, yid);
  ASSERT_EQ(djava_sos_load(by, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(by);
  djava_sos_stats after{};
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses - before.misses, 0u);
  {
    std::lock_guard<std::mutex> l(jvm_b.mu);
    EXPECT_EQ(jvm_b.objects[yid], "yyyy");
  }
}

TEST(SosClient, ANewObjectSentAlongWaitsAtHomeWhenTheServerKeepsIt) { NewObjectGoesAlong(false); }

// A grant sent along is clean (Grant.clean): b holds y exclusive, yet its
// word says S (reads hit, and a JVM would not pin the object) until b first
// writes it, which asks nothing. Then `then` decides what happens to y:
// a reads it while b never wrote it (b's answer to the flush carries no
// bytes, and a gets the home copy); b writes it first (the flush carries
// b's bytes); or b lets go of it unwritten (it goes home without bytes, and
// a's read finds it at home, with no flush).
enum class AfterCleanGrant { kReadElsewhere, kWritten, kUnreferenced };

void CleanGrantSentAlong(AfterCleanGrant then) {
  Server server;
  MadeXNamingY m(server, true);
  RefsJvm &jvm_a = m.jvm_a, &jvm_b = m.jvm_b;
  djava_sos_client* b = m.b;
  const uint64_t yid = m.yid;
  djava_sos_error e{};
  ASSERT_NO_FATAL_FAILURE(BReadsXAndGetsYAlong(server, m));
  djava_sos_chunk* by = djava_sos_chunk_for(b, yid);
  // b's object for y names the handle, as a JVM's would: otherwise b lets
  // go of y as soon as x's install names it nowhere (a race with a's read).
  djava_sos_set_user(by, 3);
  ASSERT_EQ(djava_sos_load(by, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(by);
  EXPECT_EQ(*djava_sos_word(by) & DJAVA_SOS_WORD_STATE_MASK, DJAVA_SOS_WORD_STATE_S);
  djava_sos_stats b_before{};
  djava_sos_get_stats(b, &b_before);
  if (then == AfterCleanGrant::kWritten) {
    ASSERT_EQ(djava_sos_lock(by, &e), DJAVA_SOS_OK) << e.message;
    {
      std::lock_guard<std::mutex> l(jvm_b.mu);
      jvm_b.objects[yid] = "YYYY";
    }
    djava_sos_release(by);
    EXPECT_EQ(*djava_sos_word(by) & DJAVA_SOS_WORD_STATE_MASK, DJAVA_SOS_WORD_STATE_M);
    djava_sos_stats b_after{};
    djava_sos_get_stats(b, &b_after);
    EXPECT_EQ(b_after.misses, b_before.misses) << "the first write asks nothing";
    EXPECT_EQ(b_after.upgrades, b_before.upgrades);
  }
  const uint64_t flushes_before = server.service().DirectoryStatistics().flushes;
  if (then == AfterCleanGrant::kUnreferenced) {
    djava_sos_set_user(by, 0);  // b's object for y died
    djava_sos_unreferenced(by);
    for (int i = 0; i < 400 && djava_sos_handle_count(b) > 1; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(djava_sos_handle_count(b), 1u) << "b released y (and holds x)";
  }
  {
    std::lock_guard<std::mutex> l(jvm_a.mu);
    jvm_a.objects[yid] = "gone";  // a dropped its copy: what it reads comes from elsewhere
  }
  djava_sos_chunk* ay = m.ay;
  ASSERT_EQ(djava_sos_load(ay, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(ay);
  {
    std::lock_guard<std::mutex> l(jvm_a.mu);
    EXPECT_EQ(jvm_a.objects[yid], then == AfterCleanGrant::kWritten ? "YYYY" : "yyyy");
  }
  const DirectoryStats d = server.service().DirectoryStatistics();
  EXPECT_EQ(d.clean_returns, then == AfterCleanGrant::kWritten ? 0u : 1u) << server.service().Stats();
  EXPECT_EQ(d.flushes - flushes_before, then == AfterCleanGrant::kUnreferenced ? 0u : 1u);
  EXPECT_EQ(d.lost, 0u);
}

// A clean grant b has not installed yet (a stash) when a's read flushes it:
// b keeps a read copy of it, no longer the owner's. b's write then asks the
// server, which takes a's copy away, and a reads what b wrote. (Installed
// as clean, the write would have stayed on b, and a read its stale copy:
// a lost wake-up in ArrayBlockingQueue, whose waiters' count went so.)
TEST(SosClient, ACleanGrantFlushedBeforeItsInstallIsOnlyAReadCopy) {
  Server server;
  MadeXNamingY m(server, true);
  RefsJvm &jvm_a = m.jvm_a, &jvm_b = m.jvm_b;
  djava_sos_client* b = m.b;
  const uint64_t yid = m.yid;
  djava_sos_error e{};
  ASSERT_NO_FATAL_FAILURE(BReadsXAndGetsYAlong(server, m));
  djava_sos_chunk* ay = m.ay;
  ASSERT_EQ(djava_sos_load(ay, &e), DJAVA_SOS_OK) << e.message;  // flushes b, which keeps a copy
  djava_sos_release(ay);
  djava_sos_chunk* by = djava_sos_chunk_for(b, yid);
  djava_sos_stats before{};
  djava_sos_get_stats(b, &before);
  ASSERT_EQ(djava_sos_lock(by, &e), DJAVA_SOS_OK) << e.message;
  {
    std::lock_guard<std::mutex> l(jvm_b.mu);
    EXPECT_EQ(jvm_b.objects[yid], "yyyy");
    jvm_b.objects[yid] = "ZZZZ";
  }
  djava_sos_release(by);
  djava_sos_stats after{};
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses - before.misses, 1u) << "the write asks the server";
  ASSERT_EQ(djava_sos_load(ay, &e), DJAVA_SOS_OK) << e.message;
  djava_sos_release(ay);
  std::lock_guard<std::mutex> l(jvm_a.mu);
  EXPECT_EQ(jvm_a.objects[yid], "ZZZZ");
}

TEST(SosClient, ACleanGrantReadElsewhereIsAnsweredWithoutBytes) {
  CleanGrantSentAlong(AfterCleanGrant::kReadElsewhere);
}

TEST(SosClient, ACleanGrantWrittenIsModifiedWithNoMessage) {
  CleanGrantSentAlong(AfterCleanGrant::kWritten);
}

TEST(SosClient, ACleanGrantLetGoOfGoesHomeWithoutBytes) {
  CleanGrantSentAlong(AfterCleanGrant::kUnreferenced);
}

// Migratory sharing against the real server: two nodes take turns to read
// a counter and then write it plus one (a field updated under a lock). The
// directory finds the chunk migratory after the first turn and answers each
// later read with an exclusive copy, which the client installs as M: the
// write that follows needs no upgrade. The counter names another chunk, so
// the test also checks that those grants' shipments are counted alike on
// both sides (every chunk is collected once every node lets go, and no
// release takes back more than was shipped).
void TakeTurnsIncrementing(bool migratory) {
  SosService::Options options;
  options.migratory = migratory;
  Server server(options);
  RefsJvm jvm_a, jvm_b, jvm_c;
  djava_sos_callbacks cba = RefsCallbacks(&jvm_a), cbb = RefsCallbacks(&jvm_b),
                      cbc = RefsCallbacks(&jvm_c);
  djava_sos_client* a = server.Connect("a", &cba);
  djava_sos_client* b = server.Connect("b", &cbb);
  djava_sos_meta meta = Meta("Counter");
  djava_sos_chunk* ax = djava_sos_alloc(a, 8, &meta, nullptr);
  djava_sos_chunk* ay = djava_sos_alloc(a, 4, &meta, nullptr);
  const uint64_t xid = djava_sos_id(ax), yid = djava_sos_id(ay);
  jvm_a.objects[xid] = std::string(8, '\0');
  jvm_a.objects[yid] = "yyyy";
  djava_sos_chunk* bx = djava_sos_chunk_for(b, xid);
  // b reads y first, so that the server knows it (and lists its holds).
  djava_sos_chunk* by = djava_sos_chunk_for(b, yid);
  {
    djava_sos_error e{};
    ASSERT_EQ(djava_sos_load(by, &e), DJAVA_SOS_OK) << e.message;
    djava_sos_release(by);
  }
  const uint64_t grants_before = server.service().DirectoryStatistics().grants;
  struct Side {
    djava_sos_client* client;
    RefsJvm* jvm;
    djava_sos_chunk* x;
  } sides[2] = {{a, &jvm_a, ax}, {b, &jvm_b, bx}};
  auto misses = [&] {
    djava_sos_stats sa{}, sb{};
    djava_sos_get_stats(a, &sa);
    djava_sos_get_stats(b, &sb);
    return sa.misses + sb.misses;
  };
  constexpr int kTurns = 20;
  for (int turn = 1; turn <= kTurns; turn++) {
    SCOPED_TRACE("turn " + std::to_string(turn));
    Side& n = sides[turn % 2];  // b first: a made the chunk
    const uint64_t misses_before = misses();
    const DirectoryStats before = server.service().DirectoryStatistics();
    djava_sos_error e{};
    ASSERT_EQ(djava_sos_load(n.x, &e), DJAVA_SOS_OK) << e.message;
    uint64_t v;
    {
      std::lock_guard<std::mutex> l(n.jvm->mu);
      std::memcpy(&v, n.jvm->objects[xid].data(), 8);
    }
    djava_sos_release(n.x);
    EXPECT_EQ(v, static_cast<uint64_t>(turn - 1));
    ASSERT_EQ(djava_sos_lock(n.x, &e), DJAVA_SOS_OK) << e.message;
    v++;
    {
      std::lock_guard<std::mutex> l(n.jvm->mu);
      n.jvm->objects[xid].assign(reinterpret_cast<const char*>(&v), 8);
      n.jvm->refs[xid] = {yid};  // the counter names y
    }
    djava_sos_release(n.x);
    // (Invalidates and flushes are counted before the grant that follows
    // them is decided; a grant only after it is sent: counted at the end.)
    const DirectoryStats after = server.service().DirectoryStatistics();
    if (turn == 1 || !migratory) {
      EXPECT_EQ(misses() - misses_before, 2u) << "a read and an upgrade";
      EXPECT_EQ(after.invalidates - before.invalidates, 1u);
    } else {
      EXPECT_EQ(misses() - misses_before, 1u) << "the read's grant was not exclusive";
      EXPECT_EQ(after.invalidates - before.invalidates, 0u);
    }
    EXPECT_EQ(after.flushes - before.flushes, 1u);
  }
  const uint64_t grants = migratory ? 2 + (kTurns - 1) : 2 * kTurns;
  for (int i = 0; i < 200 && server.service().DirectoryStatistics().grants < grants_before + grants;
       i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const DirectoryStats st = server.service().DirectoryStatistics();
  EXPECT_EQ(st.grants - grants_before, grants);
  EXPECT_EQ(st.migratory_marked, migratory ? 1u : 0u);
  EXPECT_EQ(st.migratory_grants, migratory ? kTurns - 1u : 0u);
  EXPECT_EQ(st.migratory_undone, 0u);
  EXPECT_NE(server.service().Stats().find("reads granted exclusive " +
                                          std::to_string(st.migratory_grants)),
            std::string::npos)
      << server.service().Stats();

  // a, the last to write, writes the counter home; c reads it (and learns y).
  ASSERT_EQ(djava_sos_write_back(ax), DJAVA_SOS_OK);
  djava_sos_client* c = server.Connect("c", &cbc);
  djava_sos_chunk* cx = djava_sos_chunk_for(c, xid);
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_load(cx, &e), DJAVA_SOS_OK) << e.message;
  {
    std::lock_guard<std::mutex> l(jvm_c.mu);
    uint64_t v;
    std::memcpy(&v, jvm_c.objects[xid].data(), 8);
    EXPECT_EQ(v, static_cast<uint64_t>(kTurns));
  }
  djava_sos_release(cx);
  // Everyone lets go of both: the holds end, both chunks go.
  for (djava_sos_client* n : {a, b, c}) {
    djava_sos_unreferenced(djava_sos_chunk_for(n, xid));
    djava_sos_unreferenced(djava_sos_chunk_for(n, yid));
  }
  ASSERT_TRUE(CollectedAtLeast(server, 2)) << server.service().Stats();
  EXPECT_EQ(server.service().DirectoryStatistics().excess_releases, 0u)
      << server.service().Stats();
  djava_sos_abandon(c);
  djava_sos_abandon(b);
  djava_sos_abandon(a);
}

TEST(SosClient, NodesTakingTurnsToIncrementAChunkReadItExclusivelyOnceItIsMigratory) {
  TakeTurnsIncrementing(/*migratory=*/true);
}

TEST(SosClient, WithoutMigratoryDetectionEveryTurnIsAReadAndAnUpgrade) {
  TakeTurnsIncrementing(/*migratory=*/false);
}

}  // namespace
}  // namespace sos
}  // namespace djava
