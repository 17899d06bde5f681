// sos-bench: the shared-object system's costs on this machine, in one run on
// loopback, against a real sos-server child process:
//   (a) raw TCP ping-pong with a load's frame sizes (the physical floor),
//   (b) uncached load (chunk at home, nobody else holds it),
//   (c) lock with 0, 1 and 4 read sharers to invalidate,
//   (d) cached load+release,
//   (e) throughput with two clients.
// Prints a markdown table and the ratio (b)/(a). Targets (issue 3):
// uncached load <= 1.5x ping-pong, cached load+release <= 50 ns.
//
//   sos-bench [--ping-pong-only] [--server PATH] [--iterations N] [--size BYTES]
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_server.h"
#include "djava/sos_client.h"

namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// The sos-server this run started (Cluster::Start), stopped by Die too.
pid_t started_server = -1;

// _Exit, not exit: two client threads may meet one error at once, and exit
// from two threads at once is undefined (it may leave the bench hanging).
[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "sos-bench: %s\n", why.c_str());
  std::fflush(nullptr);
  if (started_server > 0) kill(started_server, SIGTERM);
  std::_Exit(1);
}

struct Summary {
  double mean = 0, p50 = 0, p99 = 0;
};

Summary Summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / v.size();
  s.p50 = v[v.size() / 2];
  s.p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)];
  return s;
}

// ---- (a) the floor: a framed request and reply between two processes ----------

void WriteAll(int fd, const char* p, size_t n) {
  if (!djava::bench::WriteFull(fd, p, n)) Die("ping-pong write failed");
}

bool ReadAll(int fd, char* p, size_t n) { return djava::bench::ReadFull(fd, p, n); }

// Reads n bytes the way sos-client waits for a grant: up to 50 sched_yield
// rounds polling without blocking, then a blocking read.
bool ReadAllYielding(int fd, char* p, size_t n) {
  int yields = 0;
  while (n > 0) {
    ssize_t r = recv(fd, p, n, yields < 50 ? MSG_DONTWAIT : 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      yields++;
      sched_yield();
      continue;
    }
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// yielding: the reader waits as sos-client's waiting thread does (the echo
// side blocks, as the server does), so that (b)/(a) compares like with like.
Summary PingPong(size_t request, size_t reply, int iterations, bool yielding = false) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(l, 1) != 0 ||
      getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    Die("ping-pong: cannot listen");
  pid_t child = fork();
  if (child == 0) {  // the echo process: read a request, answer a reply
    int s = accept(l, nullptr, nullptr);
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::vector<char> in(request), out(reply);
    while (ReadAll(s, in.data(), request)) WriteAll(s, out.data(), reply);
    _exit(0);
  }
  close(l);
  int c = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) Die("ping-pong: cannot connect");
  int one = 1;
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::vector<char> out(request), in(reply);
  std::vector<double> samples;
  for (int i = 0; i < iterations + iterations / 10; i++) {
    auto t0 = Clock::now();
    WriteAll(c, out.data(), request);
    if (!(yielding ? ReadAllYielding(c, in.data(), reply) : ReadAll(c, in.data(), reply)))
      Die("ping-pong: echo process died");
    if (i >= iterations / 10) samples.push_back(Micros(Clock::now() - t0));  // after warm-up
  }
  close(c);
  waitpid(child, nullptr, 0);
  return Summarize(samples);
}

// ---- the server and clients ------------------------------------------------------

// The sos-server child (bench_server.h), stopped by Die too.
struct Cluster {
  djava::bench::BenchServer server;

  void Start(const std::string& binary) {
    std::string error;
    // No collection: the chunks a creator wrote home and left are garbage
    // to the distributed collector, which could free them before the
    // readers ask (this measures misses, not the collector).
    if (!server.Start(binary, {"--no-collection"}, &error)) Die(error);
    started_server = server.pid();
  }

  djava_sos_client* Connect(const char* name) {
    std::string error;
    djava_sos_client* c = server.Connect(name, &error);
    if (c == nullptr) Die(error);
    return c;
  }

  void Stop() { server.Stop(); }
};

void Check(djava_sos_status s, const djava_sos_error& e) {
  if (s != DJAVA_SOS_OK) Die(e.message);
}

// n chunks of `size` bytes, written by a node that then leaves: all at home.
std::vector<uint64_t> HomeChunks(Cluster& cluster, int n, size_t size) {
  djava_sos_client* creator = cluster.Connect("creator");
  std::vector<uint64_t> ids;
  djava_sos_error e{};
  for (int i = 0; i < n; i++) {
    djava_sos_chunk* c = djava_sos_alloc(creator, size, nullptr, &e);
    if (c == nullptr) Die(e.message);
    ids.push_back(djava_sos_id(c));
  }
  Check(djava_sos_close(creator, &e), e);
  return ids;
}

Summary UncachedLoad(Cluster& cluster, int n, size_t size) {
  std::vector<uint64_t> ids = HomeChunks(cluster, n, size);
  djava_sos_client* reader = cluster.Connect("reader");
  std::vector<double> samples;
  djava_sos_error e{};
  for (uint64_t id : ids) {
    djava_sos_chunk* c = djava_sos_chunk_for(reader, id);
    auto t0 = Clock::now();
    Check(djava_sos_load(c, &e), e);
    djava_sos_release(c);
    samples.push_back(Micros(Clock::now() - t0));
  }
  djava_sos_abandon(reader);
  samples.erase(samples.begin(), samples.begin() + samples.size() / 10);  // warm-up
  return Summarize(samples);
}

Summary LockWithSharers(Cluster& cluster, int n, size_t size, int sharers) {
  std::vector<uint64_t> ids = HomeChunks(cluster, n, size);
  std::vector<djava_sos_client*> readers;
  djava_sos_error e{};
  for (int s = 0; s < sharers; s++) {
    readers.push_back(cluster.Connect("sharer"));
    for (uint64_t id : ids) {
      djava_sos_chunk* c = djava_sos_chunk_for(readers.back(), id);
      Check(djava_sos_load(c, &e), e);
      djava_sos_release(c);
    }
  }
  djava_sos_client* writer = cluster.Connect("writer");
  std::vector<double> samples;
  for (uint64_t id : ids) {
    djava_sos_chunk* c = djava_sos_chunk_for(writer, id);
    auto t0 = Clock::now();
    Check(djava_sos_lock(c, &e), e);
    djava_sos_release(c);
    samples.push_back(Micros(Clock::now() - t0));
  }
  djava_sos_abandon(writer);
  for (auto* r : readers) djava_sos_abandon(r);
  samples.erase(samples.begin(), samples.begin() + samples.size() / 10);
  return Summarize(samples);
}

double CachedLoadReleaseNs(Cluster& cluster, long iterations) {
  djava_sos_client* node = cluster.Connect("cached");
  djava_sos_error e{};
  djava_sos_chunk* c = djava_sos_alloc(node, 64, nullptr, &e);
  if (c == nullptr) Die(e.message);
  volatile uint64_t sink = 0;
  auto t0 = Clock::now();
  for (long i = 0; i < iterations; i++) {
    djava_sos_load(c, &e);
    sink = sink + *static_cast<uint64_t*>(djava_sos_data(c));
    djava_sos_release(c);
  }
  double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iterations;
  djava_sos_abandon(node);
  return ns;
}

// Two clients each loading their own fresh chunks from home at once.
double TwoReadersPerSecond(Cluster& cluster, int n, size_t size) {
  std::vector<uint64_t> ids = HomeChunks(cluster, 2 * n, size);
  djava_sos_client* a = cluster.Connect("reader-a");
  djava_sos_client* b = cluster.Connect("reader-b");
  auto run = [&](djava_sos_client* node, int first) {
    djava_sos_error e{};
    for (int i = first; i < first + n; i++) {
      djava_sos_chunk* c = djava_sos_chunk_for(node, ids[i]);
      Check(djava_sos_load(c, &e), e);
      djava_sos_release(c);
    }
  };
  auto t0 = Clock::now();
  std::thread ta(run, a, 0), tb(run, b, n);
  ta.join();
  tb.join();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  djava_sos_abandon(a);
  djava_sos_abandon(b);
  return 2 * n / s;
}

// Two clients writing one chunk as fast as they can: locks/s, and how often
// the chunk moved between them (flushes/s).
struct Contended {
  double locks_per_s = 0, moves_per_s = 0;
};

// Both writers start together (a barrier) and run for `seconds`, so neither
// can finish its share before the other begins.
Contended TwoWritersPerSecond(Cluster& cluster, double seconds) {
  djava_sos_client* a = cluster.Connect("writer-a");
  djava_sos_client* b = cluster.Connect("writer-b");
  djava_sos_error e{};
  djava_sos_chunk* ca = djava_sos_alloc(a, 8, nullptr, &e);
  if (ca == nullptr) Die(e.message);
  djava_sos_chunk* cb = djava_sos_chunk_for(b, djava_sos_id(ca));
  std::atomic<int> ready{0};
  std::atomic<bool> stop{false};
  auto run = [&](djava_sos_chunk* c, uint64_t* done) {
    djava_sos_error err{};
    ready++;
    while (ready.load() < 2) {
    }
    uint64_t n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      Check(djava_sos_lock(c, &err), err);
      ++*static_cast<uint64_t*>(djava_sos_data(c));
      djava_sos_release(c);
      n++;
    }
    *done = n;
  };
  uint64_t na = 0, nb = 0;
  std::thread ta(run, ca, &na), tb(run, cb, &nb);
  while (ready.load() < 2) std::this_thread::yield();
  auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  ta.join();
  tb.join();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  Check(djava_sos_load(ca, &e), e);
  uint64_t total = *static_cast<uint64_t*>(djava_sos_data(ca));
  djava_sos_release(ca);
  if (total != na + nb)
    Die("two writers: lost updates (" + std::to_string(total) + " of " + std::to_string(na + nb) +
        ")");
  djava_sos_stats sa{}, sb{};
  djava_sos_get_stats(a, &sa);
  djava_sos_get_stats(b, &sb);
  djava_sos_abandon(a);
  djava_sos_abandon(b);
  return Contended{(na + nb) / s, (sa.flushes + sb.flushes) / s};
}

std::string DefaultServer(const char* argv0) {
  std::string self = argv0;
  size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/sos-server";
}

}  // namespace

int main(int argc, char** argv) {
  std::string server = DefaultServer(argv[0]);
  int iterations = 2000;
  size_t size = 64;
  bool ping_pong_only = false;
  if (argc > 1 && std::string(argv[1]) == "--ping-pong-only") {
    ping_pong_only = true;  // the floor for other benchmarks (bench/micro/uncached.py)
    argv++;
    argc--;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--server") server = argv[i + 1];
    else if (a == "--iterations") iterations = std::max(10, std::atoi(argv[i + 1]));
    else if (a == "--size") size = static_cast<size_t>(std::atol(argv[i + 1]));
    else Die("usage: sos-bench [--ping-pong-only] [--server PATH] [--iterations N] [--size BYTES]");
  }
  if (argc % 2 == 0) Die("usage: sos-bench [--ping-pong-only] [--server PATH] [--iterations N] [--size BYTES]");
  signal(SIGPIPE, SIG_IGN);

  // Frame sizes of a load: a Read request and a Grant carrying `size` bytes
  // (the frame header plus the protobuf encoding of those messages).
  const size_t request_bytes = 4 + 13, reply_bytes = 4 + 22 + size;
  Summary ping = PingPong(request_bytes, reply_bytes, iterations);
  if (ping_pong_only) {
    std::printf("ping-pong p50 %.2f us mean %.2f us\n", ping.p50, ping.mean);
    return 0;
  }
  Summary ping_yield = PingPong(request_bytes, reply_bytes, iterations, true);

  Cluster cluster;
  cluster.Start(server);
  Summary uncached = UncachedLoad(cluster, iterations, size);
  Summary lock0 = LockWithSharers(cluster, iterations, size, 0);
  Summary lock1 = LockWithSharers(cluster, iterations, size, 1);
  Summary lock4 = LockWithSharers(cluster, iterations, size, 4);
  double cached_ns = CachedLoadReleaseNs(cluster, 10000L * iterations);
  double readers = TwoReadersPerSecond(cluster, iterations, size);
  Contended writers = TwoWritersPerSecond(cluster, std::min(1.0, iterations * 0.0005));
  cluster.Stop();

  std::printf("## sos-bench: %d iterations, %zu-byte chunks, loopback\n\n", iterations, size);
  std::printf("| measurement | mean | p50 | p99 |\n|---|---|---|---|\n");
  auto row = [](const char* what, const Summary& s) {
    std::printf("| %s | %.1f us | %.1f us | %.1f us |\n", what, s.mean, s.p50, s.p99);
  };
  row("(a) TCP ping-pong, same frame sizes", ping);
  row("(b) uncached load", uncached);
  row("(c) lock, 0 sharers", lock0);
  row("(c) lock, 1 sharer to invalidate", lock1);
  row("(c) lock, 4 sharers to invalidate", lock4);
  std::printf("| (d) cached load+release | %.1f ns | | |\n", cached_ns);
  std::printf("| (e) two clients loading, misses/s | %.0f | | |\n", readers);
  std::printf("| (e) two clients writing one chunk, locks/s | %.0f | | |\n", writers.locks_per_s);
  std::printf("| (e) ... of which the chunk moved between them, /s | %.0f | | |\n",
              writers.moves_per_s);
  std::printf("\nuncached load / ping-pong (p50): %.2f (target <= 1.5)\n", uncached.p50 / ping.p50);
  std::printf("cached load+release: %.1f ns (target <= 50)\n", cached_ns);
  std::printf(
      "\nping-pong with the reader waiting as sos-client does (50 yields, then block): "
      "p50 %.1f us, mean %.1f us; uncached load / that (p50): %.2f\n",
      ping_yield.p50, ping_yield.mean, uncached.p50 / ping_yield.p50);
  std::printf(
      "(a) echo: a forked process, blocking reads; request %zu bytes, reply %zu bytes.\n"
      "(b) each sample: a different chunk, written home by a creator that left, loaded for the\n"
      "    first time by one reader node (Read -> Grant with the bytes; no flush, no invalidate).\n"
      "(c) each sample: lock of a chunk at home that 0/1/4 other nodes hold read copies of.\n"
      "(e) writers: two nodes, one thread each, lock+increment+release on one chunk for %.2f s.\n",
      request_bytes, reply_bytes, std::min(1.0, iterations * 0.0005));
  return 0;
}
