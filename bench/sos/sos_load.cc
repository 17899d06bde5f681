// sos-load: what one sos-server sustains, and N that split the directory
// (issue 23). P client processes, each a node of its own through the C ABIs
// the JVM uses, drive fresh servers as fast as they can, all starting
// together; the servers' CPU time over the run is read from /proc. Two
// loads:
//   misses  each client loads chunks at home it never held, a different one
//           each time (Read -> Grant with 64 bytes: an uncached read);
//   locks   each client enters and exits a monitor of its own at the monitor
//           service of a server that grants no leases (so every lock and
//           unlock reaches it, as a contended lock's do).
// What carries to other machines is the servers' CPU time per operation and
// how evenly the shards share it: one core of a directory server sustains
// about 1 / that many operations a second, and N shards on N cores N times
// that while the busiest carries about 1/N (docs/BENCHMARKS.md turns it into
// thread servers per directory). Prints a markdown table.
//
//   sos-load [--server PATH] [--clients 1,2,4,8] [--shards 1,2,4] [--ops N]
//            [--load misses|locks|both] [--transport auto|ucx|tcp]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_server.h"
#include "djava/monitor_client.h"
#include "djava/sos_client.h"
#include "sos/ids.h"

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "sos-load: %s\n", why.c_str());
  std::fflush(nullptr);
  std::_Exit(1);
}

// CPU seconds (user and system) the process has used so far.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) Die("cannot read /proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // After the command: state is field 3, utime 14 and stime 15.
  for (int i = 3; i <= 15 && fields >> field; i++) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void WriteAll(int fd, const void* data, size_t n) {
  if (!djava::bench::WriteFull(fd, data, n)) Die("pipe write failed");
}

bool ReadAll(int fd, void* data, size_t n) { return djava::bench::ReadFull(fd, data, n); }

struct Pipe {
  int fd[2];
  Pipe() {
    if (pipe(fd) != 0) Die("pipe failed");
  }
};

// A client's work: made in its own process (connecting, looking up what it
// will use), then run when every client is ready; returns its operations.
using Prepare = std::function<std::function<uint64_t()>(int client)>;

struct Outcome {
  uint64_t operations = 0;
  double seconds = 0, server_cpu = 0;  // every shard's
  double busiest_share = 1;            // of server_cpu, the busiest shard's
};

// Runs `clients` processes that prepare, wait for the start, run and report
// their counts; they stay until the server's CPU time has been read (a
// leaving node would cost the server work outside the run).
Outcome RunClients(int clients, const std::vector<pid_t>& servers, const Prepare& prepare) {
  Pipe ready, go, results, end;
  std::vector<pid_t> children;
  for (int i = 0; i < clients; i++) {
    pid_t pid = fork();
    if (pid < 0) Die("fork failed");
    if (pid == 0) {
      close(go.fd[1]);
      close(end.fd[1]);
      std::function<uint64_t()> run = prepare(i);
      char byte = 1;
      WriteAll(ready.fd[1], &byte, 1);
      if (!ReadAll(go.fd[0], &byte, 1)) _exit(1);
      uint64_t n = run();
      WriteAll(results.fd[1], &n, sizeof n);
      ReadAll(end.fd[0], &byte, 1);  // end of input: the parent is done
      _exit(0);
    }
    children.push_back(pid);
  }
  close(go.fd[0]);
  close(end.fd[0]);
  for (int i = 0; i < clients; i++) {
    char byte;
    if (!ReadAll(ready.fd[0], &byte, 1)) Die("a client failed before the start");
  }
  Outcome o;
  std::vector<double> cpu0;
  for (pid_t server : servers) cpu0.push_back(CpuSeconds(server));
  const auto t0 = Clock::now();
  std::vector<char> start(static_cast<size_t>(clients), 1);
  WriteAll(go.fd[1], start.data(), start.size());
  for (int i = 0; i < clients; i++) {
    uint64_t n = 0;
    if (!ReadAll(results.fd[0], &n, sizeof n)) Die("a client failed during the run");
    o.operations += n;
  }
  o.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  double busiest = 0;
  for (size_t i = 0; i < servers.size(); i++) {
    const double used = CpuSeconds(servers[i]) - cpu0[i];
    o.server_cpu += used;
    busiest = std::max(busiest, used);
  }
  o.busiest_share = o.server_cpu > 0 ? busiest / o.server_cpu : 1;
  close(end.fd[1]);
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
  for (int fd : {ready.fd[0], ready.fd[1], go.fd[1], results.fd[0], results.fd[1]}) close(fd);
  return o;
}

void Check(djava_sos_status s, const djava_sos_error& e) {
  if (s != DJAVA_SOS_OK) Die(e.message);
}

// n chunks of 64 bytes at home: made by a node (its own process, so this
// one never starts a client) that then leaves, writing them back.
std::vector<uint64_t> HomeChunks(const djava::bench::BenchShards& server, size_t n) {
  Pipe ids;
  pid_t pid = fork();
  if (pid < 0) Die("fork failed");
  if (pid == 0) {
    std::string error;
    djava_sos_client* creator = server.Connect("creator", &error);
    if (creator == nullptr) Die(error);
    djava_sos_error e{};
    std::vector<uint64_t> made;
    for (size_t i = 0; i < n; i++) {
      djava_sos_chunk* c = djava_sos_alloc(creator, 64, nullptr, &e);
      if (c == nullptr) Die(e.message);
      made.push_back(djava_sos_id(c));
    }
    Check(djava_sos_close(creator, &e), e);
    WriteAll(ids.fd[1], made.data(), made.size() * sizeof(uint64_t));
    _exit(0);
  }
  close(ids.fd[1]);
  std::vector<uint64_t> made(n);
  if (!ReadAll(ids.fd[0], made.data(), n * sizeof(uint64_t))) Die("the creator failed");
  close(ids.fd[0]);
  waitpid(pid, nullptr, 0);
  return made;
}

Outcome Misses(const std::string& binary, size_t shards, int clients, size_t per_client) {
  djava::bench::BenchShards server;
  std::string error;
  // No collection: the chunks are garbage once their creator left.
  if (!server.Start(binary, shards, {"--no-collection"}, &error)) Die(error);
  std::vector<uint64_t> ids = HomeChunks(server, per_client * static_cast<size_t>(clients));
  Outcome o = RunClients(clients, server.pids(), [&](int i) {
    std::string why;
    djava_sos_client* node = server.Connect("reader", &why);
    if (node == nullptr) Die(why);
    std::vector<djava_sos_chunk*> chunks;
    for (size_t k = 0; k < per_client; k++)
      chunks.push_back(djava_sos_chunk_for(node, ids[static_cast<size_t>(i) * per_client + k]));
    return std::function<uint64_t()>([chunks] {
      djava_sos_error e{};
      for (djava_sos_chunk* c : chunks) {
        Check(djava_sos_load(c, &e), e);
        djava_sos_release(c);
      }
      return static_cast<uint64_t>(chunks.size());
    });
  });
  server.Stop();
  return o;
}

Outcome Locks(const std::string& binary, size_t shards, int clients, size_t per_client) {
  djava::bench::BenchShards server;
  std::string error;
  if (!server.Start(binary, shards, {"--no-monitor-leases"}, &error)) Die(error);
  Outcome o = RunClients(clients, server.pids(), [&](int i) {
    char err[512];
    djava_monitor_client* mc = djava_monitor_connect(server.address().c_str(),
                                                     server.secret_file().c_str(), 0, err,
                                                     sizeof err);
    if (mc == nullptr) Die(err);
    // A monitor of its own, at home on shard i mod N (a program's locks
    // are many, and spread as their ids hash).
    uint64_t object = 0x100 + 0x10000 * static_cast<uint64_t>(i);
    while (djava::sos::HomeShard(object, shards) != static_cast<size_t>(i) % shards) object++;
    return std::function<uint64_t()>([mc, object, per_client] {
      constexpr uint64_t kProgram = 1, kThread = 1;
      for (size_t k = 0; k < per_client; k++) {
        if (djava_monitor_enter(mc, object, kProgram, kThread) != DJAVA_MON_OK ||
            djava_monitor_exit(mc, object, kProgram, kThread) != DJAVA_MON_OK)
          Die(std::string("monitor: ") + djava_monitor_last_error());
      }
      return static_cast<uint64_t>(per_client);
    });
  });
  server.Stop();
  return o;
}

std::string DefaultServer(const char* argv0) {
  std::string self = argv0;
  size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/sos-server";
}

constexpr char kUsage[] =
    "usage: sos-load [--server PATH] [--clients 1,2,4,8] [--shards 1,2,4] [--ops N] "
    "[--load misses|locks|both] [--transport auto|ucx|tcp]";

std::vector<int> Counts(const std::string& option, const std::string& list, int most) {
  std::vector<int> out;
  std::istringstream in(list);
  for (std::string n; std::getline(in, n, ',');) {
    int count = std::atoi(n.c_str());
    if (count < 1 || count > most)
      Die(option + " takes counts from 1 to " + std::to_string(most) + ", not '" + n + "'");
    out.push_back(count);
  }
  if (out.empty()) Die(option + " takes a list of counts");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server = DefaultServer(argv[0]);
  std::vector<int> client_counts = {1, 2, 4, 8};
  std::vector<int> shard_counts = {1};
  size_t ops = 20000;  // per client
  std::string load = "both";
  if (argc % 2 == 0) Die(kUsage);
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--server") {
      server = v;
    } else if (a == "--clients") {
      client_counts = Counts(a, v, 64);
    } else if (a == "--shards") {
      shard_counts = Counts(a, v, 16);
    } else if (a == "--ops") {
      ops = static_cast<size_t>(std::max(100L, std::atol(v.c_str())));
    } else if (a == "--load" && (v == "misses" || v == "locks" || v == "both")) {
      load = v;
    } else if (a == "--transport" && (v == "auto" || v == "ucx" || v == "tcp")) {
      setenv("DJAVA_TRANSPORT", v.c_str(), 1);  // the server's and every client's
    } else {
      Die(kUsage);
    }
  }
  signal(SIGPIPE, SIG_IGN);
  const char* transport = getenv("DJAVA_TRANSPORT");
  std::printf("## sos-load: sos-servers splitting one directory, %zu operations a client, "
              "transport %s\n\n", ops, transport != nullptr ? transport : "(default)");
  std::printf("| load | shards | clients | operations | seconds | per second | servers' CPU, %% of "
              "a core | servers' CPU per operation | busiest shard's share |\n"
              "|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  for (const char* kind : {"misses", "locks"}) {
    if (load != "both" && load != kind) continue;
    for (int shards : shard_counts) {
      for (int clients : client_counts) {
        const size_t n = static_cast<size_t>(shards);
        Outcome o = std::strcmp(kind, "misses") == 0 ? Misses(server, n, clients, ops)
                                                     : Locks(server, n, clients, ops);
        std::printf("| %s | %d | %d | %llu | %.2f | %.0f | %.0f | %.2f us | %.0f %% |\n", kind,
                    shards, clients, static_cast<unsigned long long>(o.operations), o.seconds,
                    o.operations / o.seconds, 100 * o.server_cpu / o.seconds,
                    1e6 * o.server_cpu / static_cast<double>(o.operations),
                    100 * o.busiest_share);
        std::fflush(stdout);
      }
    }
  }
  std::printf(
      "\nmisses: each operation a Read of a chunk at home the client never held and its Grant "
      "(64 bytes).\nlocks: each operation an enter and an exit of the client's own monitor at a "
      "service granting no leases.\nThe server's CPU time is user + system from /proc, at the "
      "clock tick's resolution, summed over the shards; the busiest shard's share of it says "
      "how evenly the directory split.\n");
  return 0;
}
