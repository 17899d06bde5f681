// sos-stress: one node of the shared-object system's randomized stress test
// (test/py/sos/test_sos_stress.py). T threads do N random operations each
// over the given chunks, through the C ABI with client-held bytes:
//
//   sos-stress --server H:P --secret-file F --ids ID,ID,... --threads T
//              --ops N --seed S [--seconds T] [--node-name X] [--hold-us U]
//              [--tolerate-lost] [--callbacks]
//
// Every chunk is an array of equal 64-bit counters (size a multiple of 8,
// at least 8 bytes; the tests use 16 or more, so a torn or half-installed
// copy shows as unequal words). The operations:
//   read     load; every word equal, and the value at least what this
//            thread last saw and what this process last wrote; release
//   increment lock; the same checks; every word += 1; release
//   hold     load or lock, read, yield / sleep up to U us, read again: the
//            bytes must not change during an access (an invalidate or flush
//            waits for it); release
//   prefetch ask for read copies of all chunks in one frame
// With --callbacks the bytes live in this program's own buffers, as in the
// JVM: the client calls install() after a fetch and produce() for a flush
// (djava_sos_callbacks), and the program reads and writes its buffer during
// an access; without it the client keeps the bytes (djava_sos_data).
// With --tolerate-lost a LOST answer (another node died holding the chunk)
// is no error: the chunk is listed under "lost" and left alone from then on.
// Within one process the cache does not exclude the node's own threads (as
// in Java, they synchronize among themselves): a per-chunk reader/writer
// lock plays the role of the Java program's synchronization, so the checks
// test coherence between nodes, and between a node's threads through the
// cache.
//
// Prints "sos-stress: seed S" on stderr first, and at the end one JSON line
// on stdout:
//   {"seed":S,"node":N,"ops":..,"increments":{"0x..":n,...},
//    "lost":["0x..",...],"violations":[...],"errors":[...],"stats":{...}}
// Exit status: 0 all well, 1 a violation or error, 2 bad arguments.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "djava/sos_client.h"

namespace {

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "sos-stress: %s\n"
               "usage: sos-stress --server H:P --secret-file F --ids ID,ID,... --threads T\n"
               "                  --ops N --seed S [--seconds T] [--node-name X] [--hold-us U]\n"
               "                  [--tolerate-lost] [--callbacks]\n"
               "  each thread stops after N operations or T seconds, whichever comes first\n",
               why.c_str());
  std::exit(2);
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

std::string Hex(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, id);
  return buf;
}

struct Chunk {
  uint64_t id = 0;
  djava_sos_chunk* handle = nullptr;
  std::shared_mutex local;                  // the "Java program's" own synchronization
  std::atomic<uint64_t> increments{0};      // done by this process
  std::atomic<uint64_t> last_written{0};    // by this process, under local (exclusive)
  std::atomic<bool> lost{false};            // LOST seen (with --tolerate-lost)
  std::vector<char> own;                    // the bytes, with --callbacks
  std::atomic<uint64_t> installs{0}, produces{0};
  std::string lost_message;                 // the first LOST error's text
  std::mutex lost_mu;
};

bool g_callbacks = false;

// The bytes of an accessed chunk, wherever they live.
char* DataOf(Chunk& c) {
  return g_callbacks ? c.own.data() : static_cast<char*>(djava_sos_data(c.handle));
}
size_t SizeOf(Chunk& c) { return g_callbacks ? c.own.size() : djava_sos_size(c.handle); }

int Install(void*, djava_sos_chunk* handle, uint64_t id, const djava_sos_meta*, const void* bytes,
            size_t size, char* error, size_t capacity) {
  Chunk* c = reinterpret_cast<Chunk*>(djava_sos_user(handle));
  if (c == nullptr || c->id != id) {
    std::snprintf(error, capacity, "install for unknown chunk 0x%016" PRIx64, id);
    return 1;
  }
  c->own.assign(static_cast<const char*>(bytes), static_cast<const char*>(bytes) + size);
  c->installs++;
  return 0;
}

size_t Produce(void*, djava_sos_chunk* handle, uint64_t id, void* buffer, size_t capacity) {
  Chunk* c = reinterpret_cast<Chunk*>(djava_sos_user(handle));
  if (c == nullptr || c->id != id || c->own.size() != capacity) {
    std::fprintf(stderr, "sos-stress: produce for chunk 0x%016" PRIx64 " of %zu bytes: %s\n", id,
                 capacity, c == nullptr ? "unknown chunk" : "size differs from the installed bytes");
    std::abort();
  }
  std::memcpy(buffer, c->own.data(), capacity);
  c->produces++;
  return capacity;
}

class Stress {
 public:
  Stress(djava_sos_client* client, std::vector<std::unique_ptr<Chunk>>* chunks, uint64_t hold_us,
         bool tolerate_lost)
      : client_(client), chunks_(*chunks), hold_us_(hold_us), tolerate_lost_(tolerate_lost) {}

  // A failed access: true when the thread may go on (a tolerated LOST).
  bool AccessFailed(Chunk& c, int thread, const char* op, djava_sos_status s,
                    const djava_sos_error& err) {
    if (s == DJAVA_SOS_LOST && tolerate_lost_) {
      std::lock_guard<std::mutex> l(c.lost_mu);
      if (!c.lost.exchange(true)) c.lost_message = err.message;
      return true;
    }
    Error("thread " + std::to_string(thread) + " " + op + " " + Hex(c.id) + ": " + djava_sos_status_name(s) +
          ": " + err.message);
    return false;
  }

  void Violation(const std::string& what) {
    std::lock_guard<std::mutex> l(mu_);
    if (violations_.size() < 50) violations_.push_back(what);
    failed_ = true;
  }
  void Error(const std::string& what) {
    std::lock_guard<std::mutex> l(mu_);
    if (errors_.size() < 50) errors_.push_back(what);
    failed_ = true;
  }
  bool failed() const { return failed_; }

  // Reads the counter words of an accessed chunk; false (with a violation)
  // when they differ.
  bool ReadWords(Chunk& c, int thread, const char* op, uint64_t* value) {
    const size_t size = SizeOf(c);
    if (size < 8 || size % 8 != 0) {
      Error(Hex(c.id) + ": size " + std::to_string(size) + " is not a positive multiple of 8");
      return false;
    }
    const volatile uint64_t* w = reinterpret_cast<const volatile uint64_t*>(DataOf(c));
    if (w == nullptr) {
      Error(Hex(c.id) + ": no bytes during an access");
      return false;
    }
    const uint64_t first = w[0];
    for (size_t i = 1; i < size / 8; i++) {
      const uint64_t x = w[i];
      if (x != first) {
        Violation("thread " + std::to_string(thread) + " " + op + " " + Hex(c.id) +
                  ": torn copy: word 0 = " + std::to_string(first) + ", word " +
                  std::to_string(i) + " = " + std::to_string(x));
        return false;
      }
    }
    *value = first;
    return true;
  }

  void CheckMonotonic(Chunk& c, int thread, const char* op, uint64_t value, uint64_t seen) {
    if (value < seen)
      Violation("thread " + std::to_string(thread) + " " + op + " " + Hex(c.id) + ": read " +
                std::to_string(value) + " after this thread saw " + std::to_string(seen));
    const uint64_t mine = c.last_written.load();
    if (value < mine)
      Violation("thread " + std::to_string(thread) + " " + op + " " + Hex(c.id) + ": read " +
                std::to_string(value) + " after this process wrote " + std::to_string(mine));
  }

  void Pause(std::mt19937_64& rng) {
    if (hold_us_ == 0 || rng() % 2 == 0) {
      for (int i = 0; i < 3; i++) sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % (hold_us_ + 1)));
    }
  }

  // Threads stop at this time even if they have operations left: a slow or
  // overloaded machine then does less work, not a timeout.
  void StopAfter(std::chrono::steady_clock::duration d) {
    stop_at_ = std::chrono::steady_clock::now() + d;
  }

  void Thread(int index, uint64_t seed, uint64_t ops) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> seen(chunks_.size(), 0);
    djava_sos_error err{};
    for (uint64_t op = 0; op < ops && !failed_ && std::chrono::steady_clock::now() < stop_at_;
         op++) {
      const size_t k = rng() % chunks_.size();
      Chunk& c = *chunks_[k];
      if (c.lost) {
        bool all = true;
        for (auto& x : chunks_) all = all && x->lost;
        if (all) break;
        continue;
      }
      const unsigned dice = rng() % 100;
      if (dice < 3) {  // prefetch everything
        std::vector<uint64_t> ids;
        for (auto& x : chunks_) ids.push_back(x->id);
        djava_sos_status s = djava_sos_prefetch(client_, ids.data(), ids.size(), &err);
        if (s != DJAVA_SOS_OK)
          Error(std::string("thread ") + std::to_string(index) + " prefetch: " + djava_sos_status_name(s) +
                ": " + err.message);
        continue;
      }
      const bool write = dice < 45;
      const bool hold = dice >= 85;
      if (write) {
        std::unique_lock<std::shared_mutex> l(c.local);
        djava_sos_status s = djava_sos_lock(c.handle, &err);
        if (s != DJAVA_SOS_OK) {
          if (AccessFailed(c, index, "lock", s, err)) continue;
          break;
        }
        uint64_t v = 0;
        if (ReadWords(c, index, "lock", &v)) {
          CheckMonotonic(c, index, "lock", v, seen[k]);
          if (hold) {
            Pause(rng);
            uint64_t again = 0;
            if (ReadWords(c, index, "lock/hold", &again) && again != v)
              Violation("thread " + std::to_string(index) + " lock " + Hex(c.id) +
                        ": changed during the access from " + std::to_string(v) + " to " +
                        std::to_string(again));
          }
          volatile uint64_t* w = reinterpret_cast<volatile uint64_t*>(DataOf(c));
          const size_t words = SizeOf(c) / 8;
          for (size_t i = 0; i < words; i++) {
            w[i] = v + 1;
            if (hold && i == 0) sched_yield();  // a half-written copy must never escape
          }
          c.last_written.store(v + 1);
          c.increments++;
          seen[k] = v + 1;
        }
        djava_sos_release(c.handle);
      } else {
        std::shared_lock<std::shared_mutex> l(c.local);
        djava_sos_status s = djava_sos_load(c.handle, &err);
        if (s != DJAVA_SOS_OK) {
          if (AccessFailed(c, index, "load", s, err)) continue;
          break;
        }
        uint64_t v = 0;
        if (ReadWords(c, index, "load", &v)) {
          CheckMonotonic(c, index, "load", v, seen[k]);
          seen[k] = std::max(seen[k], v);
          if (hold) {
            Pause(rng);
            uint64_t again = 0;
            if (ReadWords(c, index, "load/hold", &again) && again != v)
              Violation("thread " + std::to_string(index) + " load " + Hex(c.id) +
                        ": changed during the access from " + std::to_string(v) + " to " +
                        std::to_string(again));
          }
        }
        djava_sos_release(c.handle);
      }
      ops_++;
    }
  }

  std::string Json(uint64_t seed, uint32_t node, const djava_sos_stats& st) {
    std::lock_guard<std::mutex> l(mu_);
    std::string j = "{\"seed\":" + std::to_string(seed) + ",\"node\":" + std::to_string(node) +
                    ",\"ops\":" + std::to_string(ops_.load()) + ",\"increments\":{";
    for (size_t i = 0; i < chunks_.size(); i++) {
      if (i > 0) j += ",";
      j += "\"" + Hex(chunks_[i]->id) + "\":" + std::to_string(chunks_[i]->increments.load());
    }
    j += "},\"lost\":{";
    bool first = true;
    for (auto& c : chunks_) {
      if (!c->lost) continue;
      std::lock_guard<std::mutex> cl(c->lost_mu);
      j += (first ? "\"" : ",\"") + Hex(c->id) + "\":\"" + JsonEscape(c->lost_message) + "\"";
      first = false;
    }
    j += "},\"violations\":[";
    for (size_t i = 0; i < violations_.size(); i++)
      j += (i > 0 ? ",\"" : "\"") + JsonEscape(violations_[i]) + "\"";
    j += "],\"errors\":[";
    for (size_t i = 0; i < errors_.size(); i++)
      j += (i > 0 ? ",\"" : "\"") + JsonEscape(errors_[i]) + "\"";
    j += "],\"stats\":{\"misses\":" + std::to_string(st.misses) +
         ",\"upgrades\":" + std::to_string(st.upgrades) +
         ",\"invalidations\":" + std::to_string(st.invalidations) +
         ",\"flushes\":" + std::to_string(st.flushes) + ",\"bytes_in\":" +
         std::to_string(st.bytes_in) + ",\"bytes_out\":" + std::to_string(st.bytes_out) + "}";
    uint64_t installs = 0, produces = 0;
    for (auto& c : chunks_) {
      installs += c->installs;
      produces += c->produces;
    }
    j += ",\"callbacks\":{\"installs\":" + std::to_string(installs) +
         ",\"produces\":" + std::to_string(produces) + "}}";
    return j;
  }

 private:
  djava_sos_client* client_;
  std::vector<std::unique_ptr<Chunk>>& chunks_;
  uint64_t hold_us_;
  std::chrono::steady_clock::time_point stop_at_ = std::chrono::steady_clock::time_point::max();
  bool tolerate_lost_;
  std::mutex mu_;
  std::vector<std::string> violations_, errors_;
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> ops_{0};
};

uint64_t ParseU64(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), &end, 0);
  if (v.empty() || *end != '\0' || errno != 0 || v[0] == '-') Usage("bad value for " + flag + ": " + v);
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server, secret_file, node_name, ids_arg;
  uint64_t threads = 0, ops = 0, seed = 0, hold_us = 50, seconds = 0;
  bool have_seed = false, tolerate_lost = false;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--tolerate-lost") {
      tolerate_lost = true;
      continue;
    }
    if (a == "--callbacks") {
      g_callbacks = true;
      continue;
    }
    if (i + 1 >= argc) Usage("missing value for " + a);
    const std::string v = argv[++i];
    if (a == "--server") server = v;
    else if (a == "--secret-file") secret_file = v;
    else if (a == "--node-name") node_name = v;
    else if (a == "--ids") ids_arg = v;
    else if (a == "--threads") threads = ParseU64(a, v);
    else if (a == "--ops") ops = ParseU64(a, v);
    else if (a == "--seed") { seed = ParseU64(a, v); have_seed = true; }
    else if (a == "--hold-us") hold_us = ParseU64(a, v);
    else if (a == "--seconds") seconds = ParseU64(a, v);
    else Usage("unknown option " + a);
  }
  if (server.empty() || secret_file.empty() || ids_arg.empty() || threads == 0 || !have_seed)
    Usage("--server, --secret-file, --ids, --threads and --seed are required");
  if (node_name.empty()) node_name = "sos-stress:" + std::to_string(getpid());
  std::fprintf(stderr, "sos-stress %s: seed %" PRIu64 "\n", node_name.c_str(), seed);

  std::vector<uint64_t> ids;
  size_t start = 0;
  while (start <= ids_arg.size()) {
    size_t comma = ids_arg.find(',', start);
    if (comma == std::string::npos) comma = ids_arg.size();
    std::string one = ids_arg.substr(start, comma - start);
    if (!one.empty()) ids.push_back(ParseU64("--ids", one));
    start = comma + 1;
  }
  if (ids.empty()) Usage("--ids names no chunk");

  djava_sos_callbacks callbacks{};
  callbacks.install = Install;
  callbacks.produce = Produce;
  djava_sos_config config{server.c_str(), secret_file.c_str(), node_name.c_str(),
                          g_callbacks ? &callbacks : nullptr};
  djava_sos_client* client = nullptr;
  djava_sos_error err{};
  djava_sos_status s = djava_sos_connect(&config, &client, &err);
  if (s != DJAVA_SOS_OK) {
    std::fprintf(stderr, "sos-stress: connect %s: %s: %s\n", server.c_str(), djava_sos_status_name(s),
                 err.message);
    std::printf("{\"seed\":%" PRIu64 ",\"errors\":[\"connect: %s\"]}\n", seed,
                JsonEscape(err.message).c_str());
    return 1;
  }

  std::vector<std::unique_ptr<Chunk>> chunks;
  for (uint64_t id : ids) {
    auto c = std::make_unique<Chunk>();
    c->id = id;
    c->handle = djava_sos_chunk_for(client, id);
    if (c->handle == nullptr) Usage("bad chunk id " + Hex(id));
    djava_sos_set_user(c->handle, reinterpret_cast<uintptr_t>(c.get()));
    chunks.push_back(std::move(c));
  }

  Stress stress(client, &chunks, hold_us, tolerate_lost);
  if (seconds != 0) stress.StopAfter(std::chrono::seconds(seconds));
  std::vector<std::thread> workers;
  std::vector<uint64_t> seeds(threads);
  for (uint64_t t = 0; t < threads; t++) seeds[t] = seed * 1000003u + t * 7919u + 1;
  for (uint64_t t = 0; t < threads; t++)
    workers.emplace_back([&, t] { stress.Thread(static_cast<int>(t), seeds[t], ops); });
  for (auto& w : workers) w.join();

  djava_sos_stats st{};
  djava_sos_get_stats(client, &st);
  const uint32_t node = djava_sos_node(client);
  s = djava_sos_close(client, &err);
  if (s != DJAVA_SOS_OK) stress.Error(std::string("close: ") + djava_sos_status_name(s) + ": " + err.message);
  std::printf("%s\n", stress.Json(seed, node, st).c_str());
  std::fflush(stdout);
  return stress.failed() ? 1 : 0;
}
