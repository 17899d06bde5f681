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
//   tm-probe serve ADDR SECRET PROGRAM DIR NTHREADS
//       A launcher that serves its program's resources from DIR: registers
//       the program, submits threads 1..NTHREADS, prints "registered", then
//       per event: a resource request for NAME is answered with the file
//       DIR/NAME ("served NAME LEN"), as not found ("missing NAME"), or, for
//       names under "hold/", never ("holding NAME"); console output goes to
//       its own stdout (stream 1) or stderr (stream 2) as is; an exit prints
//       "exit STATUS DETAIL", and 0.5 s later (any further exit would be
//       printed too) it ends the program and exits with the first STATUS.
//       Exit 1 if disconnected, 2 if the program failed.
//   tm-probe fetch ADDR SECRET PROGRAM TIMEOUT_MS OUTDIR NAME...
//       A thread server ("fetcher") that fetches every NAME at once, one
//       thread each, and prints per name "found NAME LEN" (the bytes are
//       written to OUTDIR/NAME with '/' as '_'), "not-found NAME",
//       "error NAME: WHY" or "timeout NAME: WHY". Exit 0.
//   tm-probe console ADDR SECRET PROGRAM THREAD NLINES
//       A thread server ("console-node") that writes NLINES lines as thread
//       THREAD: line i is "out i" on System.out, or "err i" on System.err
//       when i % 10 == 9; then waits until the manager has handled them all
//       and prints "sent".
//   tm-probe exit ADDR SECRET PROGRAM DETAIL STATUS...
//       Calls System.exit(STATUS) for each STATUS in order (as one node),
//       waits until the manager has handled them, prints "sent".
#include <cerrno>
#include <chrono>
#include <cstdint>
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
  for (int t = 1; t <= n; t++) djava_tm_submit(c, program, t, 0, 0);
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

// Reads DIR/NAME: 1 found, 0 no such file, -1 error (in *why).
int ReadResource(const std::string& dir, const std::string& name, std::string* data,
                 std::string* why) {
  if (name.find("..") != std::string::npos || name.empty() || name[0] == '/') {
    *why = "refusing resource name '" + name + "'";
    return -1;
  }
  std::FILE* f = std::fopen((dir + "/" + name).c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return 0;
    *why = std::strerror(errno);
    return -1;
  }
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data->append(buf, n);
  bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) {
    *why = "read error";
    return -1;
  }
  return 1;
}

int Serve(djava_tm_client* c, uint64_t program, const std::string& dir, int nthreads) {
  if (djava_tm_register_program(c, program, "tm-probe-serve", dir.c_str()) != 0) {
    std::fprintf(stderr, "tm-probe: register: %s\n", djava_tm_last_error());
    return 1;
  }
  for (int t = 1; t <= nthreads; t++) djava_tm_submit(c, program, t, 0, 0);
  std::printf("registered\n");
  std::fflush(stdout);
  bool exiting = false;
  int exit_status = 0;
  std::string exit_why;
  auto exit_at = std::chrono::steady_clock::now();
  for (;;) {
    djava_tm_event ev;
    int64_t wait = -1;
    if (exiting) {
      wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                 exit_at - std::chrono::steady_clock::now())
                 .count();
      if (wait < 0) wait = 0;
    }
    int r = djava_tm_next_event(c, &ev, wait);
    if (r < 0) break;
    if (r == 0) {
      if (!exiting) continue;
      djava_tm_program_end(c, program, exit_why.c_str());
      djava_tm_close(c);
      return exit_status & 0xff;
    }
    switch (ev.kind) {
      case DJAVA_TM_EV_RESOURCE_REQUEST: {
        std::string name(reinterpret_cast<const char*>(ev.data.data), ev.data.len);
        if (name.rfind("hold/", 0) == 0) {
          std::printf("holding %s\n", name.c_str());
          break;
        }
        std::string data, why;
        int found = ReadResource(dir, name, &data, &why);
        if (djava_tm_answer_resource(c, ev.request_id, found > 0, data.data(), data.size(),
                                     found < 0 ? why.c_str() : nullptr) != 0) {
          std::printf("answer-error %s: %s\n", name.c_str(), djava_tm_last_error());
        } else if (found > 0) {
          std::printf("served %s %zu\n", name.c_str(), data.size());
        } else {
          std::printf("missing %s\n", name.c_str());
        }
        break;
      }
      case DJAVA_TM_EV_CONSOLE:
        std::fwrite(ev.data.data, 1, ev.data.len, ev.stream == DJAVA_TM_STREAM_ERR ? stderr : stdout);
        break;
      case DJAVA_TM_EV_EXIT:
        std::printf("exit %d %s\n", ev.status, ev.detail);
        if (!exiting) {
          exiting = true;
          exit_status = ev.status;
          exit_why = "System.exit(" + std::to_string(ev.status) + "): " + ev.detail;
          exit_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
        }
        break;
      case DJAVA_TM_EV_PROGRAM_FAILED:
        std::fprintf(stderr, "program failed: %s\n", ev.detail);
        djava_tm_program_end(c, program, "failed");
        djava_tm_close(c);
        return 2;
      case DJAVA_TM_EV_DISCONNECTED:
        std::fprintf(stderr, "tm-probe: %s\n", ev.detail);
        break;
      default:
        break;
    }
    djava_tm_buffer_free(&ev.data);
    std::fflush(stdout);
    std::fflush(stderr);
  }
  djava_tm_close(c);
  return 1;
}

void RegisterAs(djava_tm_client* c, const char* name) {
  if (djava_tm_register_server(c, name, 1, nullptr) != 0) {
    std::fprintf(stderr, "tm-probe: register: %s\n", djava_tm_last_error());
    std::exit(1);
  }
}

int Fetch(djava_tm_client* c, uint64_t program, int64_t timeout_ms, const std::string& outdir,
          const std::vector<std::string>& names) {
  RegisterAs(c, "fetcher");
  std::mutex out_mu;
  std::vector<std::thread> threads;
  for (const std::string& name : names) {
    threads.emplace_back([&, name] {
      djava_tm_buffer b;
      int r = djava_tm_fetch_resource(c, program, name.c_str(), timeout_ms, &b);
      std::string why = r == DJAVA_TM_FETCH_FOUND ? "" : djava_tm_last_error();
      std::lock_guard<std::mutex> l(out_mu);
      if (r == DJAVA_TM_FETCH_FOUND) {
        std::string file = name;
        for (char& ch : file)
          if (ch == '/') ch = '_';
        std::FILE* f = std::fopen((outdir + "/" + file).c_str(), "wb");
        if (f == nullptr || std::fwrite(b.data, 1, b.len, f) != b.len) {
          std::printf("error %s: cannot write %s\n", name.c_str(), file.c_str());
        } else {
          std::printf("found %s %zu\n", name.c_str(), b.len);
        }
        if (f) std::fclose(f);
        djava_tm_buffer_free(&b);
      } else if (r == DJAVA_TM_FETCH_NOT_FOUND) {
        std::printf("not-found %s\n", name.c_str());
      } else if (r == DJAVA_TM_FETCH_TIMEOUT) {
        std::printf("timeout %s: %s\n", name.c_str(), why.c_str());
      } else {
        std::printf("error %s: %s\n", name.c_str(), why.c_str());
      }
      std::fflush(stdout);
    });
  }
  for (auto& t : threads) t.join();
  djava_tm_close(c);
  return 0;
}

// Waits until the manager has handled everything this client sent before:
// it answers a watch of an unknown thread with an error, in order.
void Barrier(djava_tm_client* c, uint64_t program) {
  djava_tm_watch(c, program, UINT64_MAX);
  for (;;) {
    djava_tm_event ev;
    int r = djava_tm_next_event(c, &ev, 10000);
    if (r != 1) {
      std::fprintf(stderr, "tm-probe: no answer from the thread manager\n");
      std::exit(1);
    }
    djava_tm_buffer_free(&ev.data);
    if (ev.kind == DJAVA_TM_EV_ERROR) return;
  }
}

int Console(djava_tm_client* c, uint64_t program, uint64_t thread, int nlines) {
  RegisterAs(c, "console-node");
  for (int i = 0; i < nlines; i++) {
    bool err = i % 10 == 9;
    std::string line = (err ? "err " : "out ") + std::to_string(i) + "\n";
    if (djava_tm_console(c, program, thread, err ? DJAVA_TM_STREAM_ERR : DJAVA_TM_STREAM_OUT,
                         line.data(), line.size()) != 0) {
      std::fprintf(stderr, "tm-probe: console: %s\n", djava_tm_last_error());
      return 1;
    }
  }
  Barrier(c, program);
  std::printf("sent\n");
  std::fflush(stdout);
  djava_tm_close(c);
  return 0;
}

int Exit(djava_tm_client* c, uint64_t program, const char* detail,
         const std::vector<int>& statuses) {
  for (int status : statuses) {
    if (djava_tm_program_exit(c, program, status, detail) != 0) {
      std::fprintf(stderr, "tm-probe: exit: %s\n", djava_tm_last_error());
      return 1;
    }
  }
  Barrier(c, program);
  std::printf("sent\n");
  std::fflush(stdout);
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
  if (argc == 7 && std::strcmp(argv[1], "serve") == 0)
    return Serve(Connect(argv[2], argv[3]), std::strtoull(argv[4], nullptr, 0), argv[5],
                 std::atoi(argv[6]));
  if (argc >= 8 && std::strcmp(argv[1], "fetch") == 0)
    return Fetch(Connect(argv[2], argv[3]), std::strtoull(argv[4], nullptr, 0),
                 std::atoll(argv[5]), argv[6], std::vector<std::string>(argv + 7, argv + argc));
  if (argc == 7 && std::strcmp(argv[1], "console") == 0)
    return Console(Connect(argv[2], argv[3]), std::strtoull(argv[4], nullptr, 0),
                   std::strtoull(argv[5], nullptr, 0), std::atoi(argv[6]));
  if (argc >= 7 && std::strcmp(argv[1], "exit") == 0) {
    std::vector<int> statuses;
    for (int i = 6; i < argc; i++) statuses.push_back(std::atoi(argv[i]));
    return Exit(Connect(argv[2], argv[3]), std::strtoull(argv[4], nullptr, 0), argv[5],
                statuses);
  }
  std::fprintf(stderr, "usage: tm-probe server ADDR SECRET NAME CAPACITY RUN_MS\n"
                       "       tm-probe launch ADDR SECRET PROGRAM NTHREADS TIMEOUT_MS\n"
                       "       tm-probe serve ADDR SECRET PROGRAM DIR NTHREADS\n"
                       "       tm-probe fetch ADDR SECRET PROGRAM TIMEOUT_MS OUTDIR NAME...\n"
                       "       tm-probe console ADDR SECRET PROGRAM THREAD NLINES\n"
                       "       tm-probe exit ADDR SECRET PROGRAM DETAIL STATUS...\n");
  return 1;
}
