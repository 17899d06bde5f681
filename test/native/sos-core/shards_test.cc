// The directory split over several sos-servers: each shard a SosService on
// its own wire::ServiceHost in this process (as sos-server --shard I/N
// runs), real clients connecting to all of them over loopback TCP.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "djava/sos_client.h"
#include "sos/ids.h"
#include "sos_service.h"
#include "wire/service_host.h"

namespace djava {
namespace sos {
namespace {

constexpr const char* kSecret = "a cluster secret of enough bytes";

class Shard {
 public:
  Shard(uint32_t index, uint32_t count) : service_(Options(index, count), nullptr),
                                          host_(kSecret, nullptr) {
    host_.AddService("sos", [this](std::unique_ptr<wire::Connection> c, const std::string& p) {
      service_.ServeMain(std::move(c), p);
    });
    host_.AddService("sos-bypass",
                     [this](std::unique_ptr<wire::Connection> c, const std::string& p) {
                       service_.ServeBypass(std::move(c), p);
                     });
    host_.OnStop([this] { service_.Stop(); });  // as sos-server's main
    std::string error;
    EXPECT_TRUE(host_.Listen("127.0.0.1:0", &error)) << error;
    address_ = "127.0.0.1:" + std::to_string(host_.port());
    thread_ = std::thread([this] { host_.Run(); });
  }
  ~Shard() { Stop(); }
  void Stop() {
    if (thread_.joinable()) {
      host_.Stop();
      thread_.join();
    }
  }
  const std::string& address() const { return address_; }
  SosService& service() { return service_; }

 private:
  static SosService::Options Options(uint32_t index, uint32_t count) {
    SosService::Options o;
    o.shard = index;
    o.shards = count;
    o.collect_check_ms = 0;  // as sos-server runs shards
    return o;
  }
  SosService service_;
  wire::ServiceHost host_;
  std::thread thread_;
  std::string address_;
};

class Cluster {
 public:
  explicit Cluster(uint32_t shards) {
    char dir[] = "/tmp/sos-shards-test-XXXXXX";
    EXPECT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    secret_file_ = dir_ + "/secret";
    std::ofstream(secret_file_) << kSecret;
    chmod(secret_file_.c_str(), 0600);
    for (uint32_t i = 0; i < shards; i++) {
      shards_.push_back(std::make_unique<Shard>(i, shards));
      list_ += (i == 0 ? "" : ",") + shards_.back()->address();
    }
  }
  ~Cluster() {
    shards_.clear();
    unlink(secret_file_.c_str());
    rmdir(dir_.c_str());
  }
  // Connects with the shards listed as `list` (default: in order).
  djava_sos_status TryConnect(const char* name, djava_sos_client** out, std::string* message,
                              const std::string& list = "") {
    const std::string servers = list.empty() ? list_ : list;
    djava_sos_config config{servers.c_str(), secret_file_.c_str(), name, nullptr};
    djava_sos_error e{};
    const djava_sos_status status = djava_sos_connect(&config, out, &e);
    if (message != nullptr) *message = e.message;
    return status;
  }
  djava_sos_client* Connect(const char* name) {
    djava_sos_client* c = nullptr;
    std::string message;
    EXPECT_EQ(TryConnect(name, &c, &message), DJAVA_SOS_OK) << message;
    return c;
  }
  Shard& shard(size_t i) { return *shards_[i]; }
  size_t size() const { return shards_.size(); }

 private:
  std::string dir_, secret_file_, list_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

djava_sos_meta Meta() {
  djava_sos_meta m{};
  m.class_name = "Cell";
  m.program = 7;
  return m;
}

uint64_t ReadU64(djava_sos_chunk* c) {
  djava_sos_error e{};
  EXPECT_EQ(djava_sos_load(c, &e), DJAVA_SOS_OK) << e.message;
  uint64_t v;
  std::memcpy(&v, djava_sos_data(c), 8);
  djava_sos_release(c);
  return v;
}

void WriteU64(djava_sos_chunk* c, uint64_t v) {
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_lock(c, &e), DJAVA_SOS_OK) << e.message;
  std::memcpy(djava_sos_data(c), &v, 8);
  djava_sos_release(c);
}

// Chunks of one creator, enough that every shard is home to some.
std::vector<djava_sos_chunk*> MakeChunks(djava_sos_client* node, size_t n, uint64_t base) {
  std::vector<djava_sos_chunk*> out;
  djava_sos_meta meta = Meta();
  for (size_t i = 0; i < n; i++) {
    djava_sos_error e{};
    djava_sos_chunk* c = djava_sos_alloc(node, 8, &meta, &e);
    EXPECT_NE(c, nullptr) << e.message;
    if (c == nullptr) break;
    WriteU64(c, base + i);
    out.push_back(c);
  }
  return out;
}

std::vector<uint64_t> IdsOf(const std::vector<djava_sos_chunk*>& chunks) {
  std::vector<uint64_t> ids;
  for (djava_sos_chunk* c : chunks) ids.push_back(djava_sos_id(c));
  return ids;
}

class Shards : public ::testing::TestWithParam<uint32_t> {};

TEST_P(Shards, EveryShardIsHomeToItsShareAndNodesShareTheirBytes) {
  Cluster cluster(GetParam());
  djava_sos_client* a = cluster.Connect("a");
  djava_sos_client* b = cluster.Connect("b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(djava_sos_node(a), djava_sos_node(b)) << "the first shard numbers the nodes";

  const size_t n = 64;
  std::vector<djava_sos_chunk*> made = MakeChunks(a, n, 1000);
  ASSERT_EQ(made.size(), n);
  std::vector<size_t> expected(cluster.size(), 0);
  for (size_t i = 0; i < n; i++) {
    djava_sos_chunk* seen = djava_sos_chunk_for(b, djava_sos_id(made[i]));
    EXPECT_EQ(ReadU64(seen), 1000 + i);
    expected[HomeShard(djava_sos_id(made[i]), cluster.size())]++;
  }
  // b writes every one back; a reads b's values: invalidation and flush on
  // every shard.
  for (size_t i = 0; i < n; i++) WriteU64(djava_sos_chunk_for(b, djava_sos_id(made[i])), 5000 + i);
  for (size_t i = 0; i < n; i++) EXPECT_EQ(ReadU64(made[i]), 5000 + i);
  for (size_t s = 0; s < cluster.size(); s++) {
    EXPECT_GT(expected[s], 0u) << "shard " << s << " is home to none of " << n << " ids";
    EXPECT_EQ(cluster.shard(s).service().DirectoryStatistics().chunks, expected[s])
        << "shard " << s << " knows exactly the chunks at home there";
  }
  djava_sos_abandon(b);
  djava_sos_abandon(a);
}

TEST_P(Shards, APrefetchAcrossShardsBringsEveryChunk) {
  Cluster cluster(GetParam());
  djava_sos_client* a = cluster.Connect("a");
  djava_sos_client* b = cluster.Connect("b");
  std::vector<djava_sos_chunk*> made = MakeChunks(a, 32, 7);
  const std::vector<uint64_t> ids = IdsOf(made);
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_prefetch_exclusive(b, ids.data(), ids.size(), &e), DJAVA_SOS_OK)
      << e.message;
  djava_sos_stats before{};
  djava_sos_get_stats(b, &before);
  for (size_t i = 0; i < ids.size(); i++)
    WriteU64(djava_sos_chunk_for(b, ids[i]), 100 + i);  // waits for its grant, asks nothing
  djava_sos_stats after{};
  djava_sos_get_stats(b, &after);
  EXPECT_EQ(after.misses, before.misses) << "every write was answered by the prefetch";
  for (size_t i = 0; i < made.size(); i++) EXPECT_EQ(ReadU64(made[i]), 100 + i);
  djava_sos_abandon(b);
  djava_sos_abandon(a);
}

TEST_P(Shards, ANodeLeavingWritesItsChunksHomeToEveryShard) {
  Cluster cluster(GetParam());
  djava_sos_client* a = cluster.Connect("a");
  djava_sos_client* b = cluster.Connect("b");
  const std::vector<uint64_t> ids = IdsOf(MakeChunks(a, 32, 300));
  djava_sos_error e{};
  ASSERT_EQ(djava_sos_close(a, &e), DJAVA_SOS_OK) << e.message;
  for (size_t i = 0; i < ids.size(); i++)
    EXPECT_EQ(ReadU64(djava_sos_chunk_for(b, ids[i])), 300 + i) << "chunk " << ChunkName(ids[i]);
  djava_sos_abandon(b);
}

INSTANTIATE_TEST_SUITE_P(OneTwoFour, Shards, ::testing::Values(1u, 2u, 4u));

TEST(ShardsRefuse, ANodeListingTheShardsInAnotherOrder) {
  Cluster cluster(2);
  djava_sos_client* c = nullptr;
  std::string message;
  const std::string reversed = cluster.shard(1).address() + "," + cluster.shard(0).address();
  EXPECT_EQ(cluster.TryConnect("confused", &c, &message, reversed), DJAVA_SOS_DISCONNECTED);
  EXPECT_NE(message.find("it is shard 1 of 2"), std::string::npos) << message;
  EXPECT_NE(message.find(cluster.shard(1).address()), std::string::npos)
      << "names the server: " << message;
  // The cluster serves others as before.
  djava_sos_client* a = cluster.Connect("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(MakeChunks(a, 4, 0).size(), 4u);
  djava_sos_abandon(a);
}

TEST(ShardsRefuse, ANodeThatKnowsOnlyPartOfTheCluster) {
  Cluster cluster(2);
  djava_sos_client* c = nullptr;
  std::string message;
  EXPECT_EQ(cluster.TryConnect("partial", &c, &message, cluster.shard(0).address()),
            DJAVA_SOS_DISCONNECTED);
  EXPECT_NE(message.find("shard 0 of 1"), std::string::npos) << message;
}

TEST(ShardsFail, AKilledShardFailsAccessesWithItsName) {
  Cluster cluster(2);
  djava_sos_client* a = cluster.Connect("a");
  djava_sos_client* b = cluster.Connect("b");
  std::vector<djava_sos_chunk*> made = MakeChunks(a, 16, 0);
  djava_sos_chunk* on_one = nullptr;
  for (djava_sos_chunk* c : made)
    if (HomeShard(djava_sos_id(c), 2) == 1) on_one = c;
  ASSERT_NE(on_one, nullptr);
  cluster.shard(1).Stop();
  djava_sos_chunk* seen = djava_sos_chunk_for(b, djava_sos_id(on_one));
  djava_sos_error e{};
  // Bounded: the receiver notices the closed connection at once.
  djava_sos_status status = djava_sos_load(seen, &e);
  for (int i = 0; i < 200 && status == DJAVA_SOS_OK; i++) {
    djava_sos_release(seen);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    status = djava_sos_load(seen, &e);
  }
  EXPECT_EQ(status, DJAVA_SOS_DISCONNECTED);
  const std::string message = e.message;
  EXPECT_NE(message.find(cluster.shard(1).address()), std::string::npos) << message;
  EXPECT_NE(message.find("shard 1 of 2"), std::string::npos) << message;
  djava_sos_abandon(b);
  djava_sos_abandon(a);
}

}  // namespace
}  // namespace sos
}  // namespace djava
