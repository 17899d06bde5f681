// monitor-probe: a client process for the monitor service's process tests
// (test/py/tm). Each subcommand is one "node" doing one scenario through the
// C ABI, printing results on stdout; exit status 0 = scenario completed,
// 2 = the program failed (a clear error on stderr), 1 = anything else.
//
//   monitor-probe counter  SHARDS SECRET OBJ PROGRAM FILE THREADS ITERS
//       THREADS threads each add 1 ITERS times to the number in FILE, under
//       the monitor OBJ (read-modify-write of a plain file: only the
//       distributed lock orders them).
//   monitor-probe produce  SHARDS SECRET OBJ PROGRAM FILE FIRST COUNT CAP
//   monitor-probe consume  SHARDS SECRET OBJ PROGRAM FILE COUNT CAP
//       A bounded buffer (capacity CAP) in FILE: producers put FIRST..;
//       consumers take COUNT items and print "took N" for each.
//   monitor-probe timedwait SHARDS SECRET OBJ PROGRAM MS
//       prints "waited <elapsed ms> <status>".
//   monitor-probe hold     SHARDS SECRET OBJ PROGRAM
//       enters, prints "holding", sleeps until killed.
//   monitor-probe enter    SHARDS SECRET OBJ PROGRAM
//       enters (blocking), prints the status and the error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "djava/monitor_client.h"

namespace {

djava_monitor_client* Connect(const char* shards, const char* secret) {
  char err[512];
  djava_monitor_client* c = djava_monitor_connect(shards, secret, 0, err, sizeof err);
  if (c == nullptr) {
    std::fprintf(stderr, "monitor-probe: connect %s: %s\n", shards, err);
    std::exit(1);
  }
  return c;
}

[[noreturn]] void Die(const char* what, int st) {
  std::fprintf(stderr, "monitor-probe: %s: status %d: %s\n", what, st,
               djava_monitor_last_error());
  std::exit(st == DJAVA_MON_FAILED ? 2 : 1);
}

void Check(const char* what, int st) {
  if (st != DJAVA_MON_OK) Die(what, st);
}

std::vector<long> ReadList(const std::string& path) {
  std::vector<long> v;
  std::ifstream in(path);
  long x;
  while (in >> x) v.push_back(x);
  return v;
}

void WriteList(const std::string& path, const std::vector<long>& v) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (long x : v) out << x << "\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

// A process's threads get distinct cluster-wide ids: pid-based.
uint64_t ThreadId(int i) { return (static_cast<uint64_t>(getpid()) << 16) | (i + 1); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: monitor-probe CMD SHARDS SECRET OBJ PROGRAM ...\n");
    return 1;
  }
  std::string cmd = argv[1];
  const char* shards = argv[2];
  const char* secret = argv[3];
  uint64_t obj = std::strtoull(argv[4], nullptr, 0);
  uint64_t program = std::strtoull(argv[5], nullptr, 0);
  djava_monitor_client* c = Connect(shards, secret);

  if (cmd == "counter" && argc == 9) {
    std::string file = argv[6];
    int threads = std::atoi(argv[7]), iters = std::atoi(argv[8]);
    std::vector<std::thread> ts;
    std::vector<int> status(threads, DJAVA_MON_OK);
    for (int i = 0; i < threads; i++)
      ts.emplace_back([&, i] {
        uint64_t me = ThreadId(i);
        for (int k = 0; k < iters; k++) {
          int st = djava_monitor_enter(c, obj, program, me);
          if (st != DJAVA_MON_OK) {
            status[i] = st;
            return;
          }
          std::vector<long> v = ReadList(file);
          long n = v.empty() ? 0 : v[0];
          WriteList(file, {n + 1});
          djava_monitor_exit(c, obj, program, me);
        }
      });
    for (auto& t : ts) t.join();
    for (int st : status) Check("counter", st);
    std::printf("done %d\n", threads * iters);
  } else if ((cmd == "produce" && argc == 10) || (cmd == "consume" && argc == 9)) {
    std::string file = argv[6];
    bool produce = cmd == "produce";
    long first = produce ? std::atol(argv[7]) : 0;
    long count = std::atol(argv[produce ? 8 : 7]);
    size_t cap = std::strtoul(argv[produce ? 9 : 8], nullptr, 10);
    uint64_t me = ThreadId(0);
    for (long k = 0; k < count; k++) {
      Check("enter", djava_monitor_enter(c, obj, program, me));
      std::vector<long> buf = ReadList(file);
      // Guarded waits, as Java code must write them: re-test after waking.
      while (produce ? buf.size() >= cap : buf.empty()) {
        int st = djava_monitor_wait(c, obj, program, me, 0);
        if (st != DJAVA_MON_OK) Die("wait", st);
        buf = ReadList(file);
      }
      if (produce) {
        buf.push_back(first + k);
      } else {
        std::printf("took %ld\n", buf.front());
        buf.erase(buf.begin());
      }
      WriteList(file, buf);
      Check("notifyAll", djava_monitor_notify(c, obj, program, me, 1));
      Check("exit", djava_monitor_exit(c, obj, program, me));
    }
    std::fflush(stdout);
  } else if (cmd == "timedwait" && argc == 7) {
    int64_t ms = std::atoll(argv[6]);
    uint64_t me = ThreadId(0);
    Check("enter", djava_monitor_enter(c, obj, program, me));
    auto t0 = std::chrono::steady_clock::now();
    int st = djava_monitor_wait(c, obj, program, me, ms);
    double el = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
    if (st != DJAVA_MON_TIMED_OUT && st != DJAVA_MON_OK) Die("wait", st);
    std::printf("waited %.1f %s count=%d\n", el, st == DJAVA_MON_TIMED_OUT ? "timed-out" : "notified",
                djava_monitor_count(c, obj, program, me));
    Check("exit", djava_monitor_exit(c, obj, program, me));
  } else if (cmd == "hold") {
    Check("enter", djava_monitor_enter(c, obj, program, ThreadId(0)));
    std::printf("holding\n");
    std::fflush(stdout);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  } else if (cmd == "enter") {
    uint64_t me = ThreadId(0);
    std::printf("entering\n");
    std::fflush(stdout);
    int st = djava_monitor_enter(c, obj, program, me);
    std::printf("status %d %s\n", st, st == DJAVA_MON_OK ? "" : djava_monitor_last_error());
    std::fflush(stdout);
    if (st == DJAVA_MON_OK) {
      djava_monitor_exit(c, obj, program, me);
    } else {
      Die("enter", st);
    }
  } else {
    std::fprintf(stderr, "monitor-probe: bad command or arguments\n");
    return 1;
  }
  djava_monitor_close(c);
  return 0;
}
