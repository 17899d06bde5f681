// monitor-bench: latency of the monitor service and the thread manager on
// loopback, through the same C ABIs the JVM uses. Prints one line per metric
// ("name value unit (p50 of N)"); bench/monitor/run-bench starts the daemons.
//
//   monitor-bench LEASE_SHARD NOLEASE_SHARD TM_ADDR SECRET
//     LEASE_SHARD   a sos-server whose monitor service grants leases
//     NOLEASE_SHARD a sos-server started with DJAVA_MONITOR_LEASES=0
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "djava/monitor_client.h"
#include "djava/tm_client.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ns(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Report(const char* name, std::vector<double> ns, double scale, const char* unit) {
  std::printf("%-44s %10.2f %s  (p50 of %zu; p90 %.2f)\n", name, Median(ns) / scale, unit,
              ns.size(), [&] {
                std::sort(ns.begin(), ns.end());
                return ns[ns.size() * 9 / 10] / scale;
              }());
}

djava_monitor_client* Mon(const char* shard, const char* secret) {
  char err[512];
  auto* c = djava_monitor_connect(shard, secret, 0, err, sizeof err);
  if (!c) {
    std::fprintf(stderr, "monitor-bench: %s: %s\n", shard, err);
    std::exit(1);
  }
  return c;
}

djava_tm_client* Tm(const char* addr, const char* secret) {
  char err[512];
  auto* c = djava_tm_connect(addr, secret, err, sizeof err);
  if (!c) {
    std::fprintf(stderr, "monitor-bench: %s: %s\n", addr, err);
    std::exit(1);
  }
  return c;
}

void Must(int st, const char* what) {
  if (st != DJAVA_MON_OK) {
    std::fprintf(stderr, "monitor-bench: %s: %d %s\n", what, st, djava_monitor_last_error());
    std::exit(1);
  }
}

constexpr uint64_t kProg = 0xbe9c4;

// Uncontended enter+exit pairs, one sample per batch of `batch` pairs.
std::vector<double> Uncontended(djava_monitor_client* c, uint64_t obj, int samples, int batch) {
  std::vector<double> v;
  Must(djava_monitor_enter(c, obj, kProg, 1), "warm enter");
  Must(djava_monitor_exit(c, obj, kProg, 1), "warm exit");
  for (int s = 0; s < samples; s++) {
    auto t0 = Clock::now();
    for (int i = 0; i < batch; i++) {
      Must(djava_monitor_enter(c, obj, kProg, 1), "enter");
      Must(djava_monitor_exit(c, obj, kProg, 1), "exit");
    }
    v.push_back(Ns(t0, Clock::now()) / batch);
  }
  return v;
}

// Node A holds the monitor, node B blocks in enter; A exits; the time until
// B's enter returns is one hand-off. Then roles swap.
std::vector<double> Handoff(djava_monitor_client* a, djava_monitor_client* b, uint64_t obj,
                            int rounds) {
  std::vector<double> v;
  djava_monitor_client* nodes[2] = {a, b};
  for (int r = 0; r < rounds; r++) {
    djava_monitor_client* from = nodes[r % 2];
    djava_monitor_client* to = nodes[1 - r % 2];
    uint64_t tf = 10 + r % 2, tt = 11 - r % 2;
    Must(djava_monitor_enter(from, obj, kProg, tf), "handoff hold");
    std::atomic<bool> started{false};
    Clock::time_point got;
    std::thread waiter([&] {
      started = true;
      Must(djava_monitor_enter(to, obj, kProg, tt), "handoff enter");
      got = Clock::now();
    });
    while (!started) std::this_thread::yield();
    // Let the waiter's Enter reach the service and queue.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    auto released = Clock::now();
    Must(djava_monitor_exit(from, obj, kProg, tf), "handoff exit");
    waiter.join();
    v.push_back(Ns(released, got));
    Must(djava_monitor_exit(to, obj, kProg, tt), "handoff release");
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: monitor-bench LEASE_SHARD NOLEASE_SHARD TM_ADDR SECRET\n");
    return 1;
  }
  const char* secret = argv[4];
  auto* lease = Mon(argv[1], secret);
  auto* nolease = Mon(argv[2], secret);

  std::vector<double> ping;
  for (int i = 0; i < 2000; i++) {
    auto t0 = Clock::now();
    Must(djava_monitor_ping(nolease), "ping");
    ping.push_back(Ns(t0, Clock::now()));
  }
  Report("tcp ping-pong (monitor service Ping)", ping, 1e3, "us");
  Report("uncontended enter+exit, lease held", Uncontended(lease, 100, 200, 10000), 1, "ns");
  Report("uncontended enter+exit, no lease", Uncontended(nolease, 100, 2000, 1), 1e3, "us");

  auto* lease2 = Mon(argv[1], secret);
  auto* nolease2 = Mon(argv[2], secret);
  Report("lock hand-off between two nodes, no lease", Handoff(nolease, nolease2, 200, 400), 1e3,
         "us");
  Report("lock hand-off between two nodes, leases on", Handoff(lease, lease2, 200, 400), 1e3,
         "us");

  // Thread start: submit -> the server process's client receives ASSIGN.
  auto* server = Tm(argv[3], secret);
  auto* launcher = Tm(argv[3], secret);
  if (djava_tm_register_server(server, "bench-server", 1, nullptr) != 0 ||
      djava_tm_register_program(launcher, kProg, "bench", "") != 0) {
    std::fprintf(stderr, "monitor-bench: register: %s\n", djava_tm_last_error());
    return 1;
  }
  std::vector<double> start;
  for (uint64_t t = 1; t <= 500; t++) {
    auto t0 = Clock::now();
    djava_tm_submit(launcher, kProg, t, 0, 0);
    djava_tm_event ev;
    do {
      if (djava_tm_next_event(server, &ev, 5000) != 1) {
        std::fprintf(stderr, "monitor-bench: no assignment\n");
        return 1;
      }
    } while (ev.kind != DJAVA_TM_EV_ASSIGN);
    start.push_back(Ns(t0, Clock::now()));
    djava_tm_thread_ended(server, kProg, t, 0, "");
    // Wait for the end to be processed so the next start is uncontended.
    djava_tm_wait_thread(launcher, kProg, t, 5000);
  }
  Report("thread start (submit -> assignment at server)", start, 1e3, "us");
  djava_tm_program_end(launcher, kProg, "bench done");
  djava_tm_close(launcher);
  djava_tm_close(server);
  djava_monitor_close(lease);
  djava_monitor_close(lease2);
  djava_monitor_close(nolease);
  djava_monitor_close(nolease2);
  return 0;
}
