// tm-probe: thread-manager client processes for the process tests.
//
//   tm-probe server ADDR SECRET NAME CAPACITY RUN_MS
//       A thread server: prints "registered ID SOS", then for each assigned
//       thread "assigned PROGRAM THREAD", "runs" it for RUN_MS and reports
//       its end (threads whose id ends in 99 end by an exception). Runs
//       until killed or disconnected.
//   tm-probe launch ADDR SECRET PROGRAM NTHREADS TIMEOUT_MS
//       A launcher: registers the program, submits threads 1..NTHREADS,
//       joins them all, prints "thread T STATE on SERVER". Exit 0 when all
//       ended; 2 with "program failed: REASON" on stderr if the program
//       failed; 1 on timeout or error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "djava/tm_client.h"

namespace {

const char* StateName(int s) {
  switch (s) {
    case DJAVA_TM_QUEUED: return "queued";
    case DJAVA_TM_RUNNING: return "running";
    case DJAVA_TM_ENDED: return "ended";
    case DJAVA_TM_ENDED_BY_EXCEPTION: return "ended-by-exception";
    case DJAVA_TM_FAILED: return "failed";
  }
  return "?";
}

djava_tm_client* Connect(const char* addr, const char* secret) {
  char err[512];
  djava_tm_client* c = djava_tm_connect(addr, secret, err, sizeof err);
  if (c == nullptr) {
    std::fprintf(stderr, "tm-probe: connect %s: %s\n", addr, err);
    std::exit(1);
  }
  return c;
}

int Server(djava_tm_client* c, const char* name, uint32_t cap, int run_ms) {
  uint64_t id = 0;
  if (djava_tm_register_server(c, name, cap, &id) != 0) {
    std::fprintf(stderr, "tm-probe: register: %s\n", djava_tm_last_error());
    return 1;
  }
  char sos[1024] = "";
  djava_tm_sos_servers(c, sos, sizeof sos);
  std::printf("registered %llu %s\n", static_cast<unsigned long long>(id), sos);
  std::fflush(stdout);
  std::mutex out_mu;
  std::vector<std::thread> running;
  for (;;) {
    djava_tm_event ev;
    int r = djava_tm_next_event(c, &ev, -1);
    if (r < 0) break;
    if (ev.kind == DJAVA_TM_EV_DISCONNECTED) {
      std::fprintf(stderr, "tm-probe: %s\n", ev.detail);
      break;
    }
    std::lock_guard<std::mutex> l(out_mu);
    if (ev.kind == DJAVA_TM_EV_ASSIGN) {
      std::printf("assigned %llu %llu\n", static_cast<unsigned long long>(ev.program),
                  static_cast<unsigned long long>(ev.thread));
      running.emplace_back([c, ev, run_ms] {
        std::this_thread::sleep_for(std::chrono::milliseconds(run_ms));
        bool exc = ev.thread % 100 == 99;
        djava_tm_thread_ended(c, ev.program, ev.thread, exc,
                              exc ? "java.lang.RuntimeException: probe" : "");
      });
    } else if (ev.kind == DJAVA_TM_EV_DROP_PROGRAM) {
      std::printf("drop %llu\n", static_cast<unsigned long long>(ev.program));
    } else if (ev.kind == DJAVA_TM_EV_ERROR) {
      std::printf("error %s\n", ev.detail);
    }
    std::fflush(stdout);
  }
  for (auto& t : running) t.join();
  djava_tm_close(c);
  return 1;
}

int Launch(djava_tm_client* c, uint64_t program, int n, int64_t timeout_ms) {
  if (djava_tm_register_program(c, program, "tm-probe", "/nonexistent/classpath") != 0) {
    std::fprintf(stderr, "tm-probe: register: %s\n", djava_tm_last_error());
    return 1;
  }
  for (int t = 1; t <= n; t++) djava_tm_submit(c, program, t, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<int> final_state(n + 1, 0);
  std::vector<std::string> where(n + 1);
  int done = 0;
  while (done < n) {
    int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(
                       deadline - std::chrono::steady_clock::now())
                       .count();
    if (left <= 0) {
      std::fprintf(stderr, "tm-probe: timeout: %d of %d threads ended\n", done, n);
      return 1;
    }
    djava_tm_event ev;
    int r = djava_tm_next_event(c, &ev, left);
    if (r < 0) {
      std::fprintf(stderr, "tm-probe: disconnected from the thread manager\n");
      return 1;
    }
    if (r == 0) continue;
    if (ev.kind == DJAVA_TM_EV_PROGRAM_FAILED) {
      std::fprintf(stderr, "program failed: %s\n", ev.detail);
      std::fflush(stdout);
      djava_tm_program_end(c, program, "failed");
      djava_tm_close(c);
      return 2;
    }
    if (ev.kind == DJAVA_TM_EV_STATE && ev.thread >= 1 && ev.thread <= uint64_t(n)) {
      if (ev.state == DJAVA_TM_RUNNING) where[ev.thread] = ev.server_name;
      // A failed thread fails its program: the manager's ProgramFailed, with
      // the reason, follows it, and ends this loop.
      if (ev.state == DJAVA_TM_FAILED) {
        std::printf("thread %llu failed on %s\n", static_cast<unsigned long long>(ev.thread),
                    where[ev.thread].c_str());
        std::fflush(stdout);
        continue;
      }
      if (ev.state >= DJAVA_TM_ENDED && final_state[ev.thread] == 0) {
        final_state[ev.thread] = ev.state;
        done++;
        std::printf("thread %llu %s on %s\n", static_cast<unsigned long long>(ev.thread),
                    StateName(ev.state), where[ev.thread].c_str());
        std::fflush(stdout);
      }
    }
  }
  djava_tm_program_end(c, program, "all threads ended");
  djava_tm_close(c);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::strcmp(argv[1], "server") == 0)
    return Server(Connect(argv[2], argv[3]), argv[4], std::atoi(argv[5]), std::atoi(argv[6]));
  if (argc == 7 && std::strcmp(argv[1], "launch") == 0)
    return Launch(Connect(argv[2], argv[3]), std::strtoull(argv[4], nullptr, 0),
                  std::atoi(argv[5]), std::atoll(argv[6]));
  std::fprintf(stderr, "usage: tm-probe server ADDR SECRET NAME CAPACITY RUN_MS\n"
                       "       tm-probe launch ADDR SECRET PROGRAM NTHREADS TIMEOUT_MS\n");
  return 1;
}
