// wire-ping-pong: the round trip of one small message and its reply between
// two processes over an authenticated wire Connection, on the transport the
// environment chooses (DJAVA_TRANSPORT: tcp, or ucx for shared memory here).
// The floor under every djava remote operation on this host.
//
//   wire-ping-pong [--iterations N] [--size BYTES] [--pause-us U]
//
// --pause-us waits that long between round trips (a program that computes
// between remote operations): the reader has gone to sleep by then.
// Prints "transport T p50 X us mean Y us p99 Z us".
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "wire.pb.h"
#include "wire/connection.h"
#include "wire/handshake.h"

namespace {

const char kSecret[] = "wire-ping-pong-secret-of-enough-bytes";

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "wire-ping-pong: %s\n", why.c_str());
  std::exit(1);
}

// The echo side: answers every message with one of the same size.
int Echo(int fd) {
  djava::wire::Connection c(fd);
  std::string service, error;
  if (!djava::wire::ServerHandshake(&c, kSecret, &service, &error)) Die(error);
  djava::wirepb::ClientHello m;
  while (c.Receive(&m)) {
    if (!c.Send(m)) break;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 20000, size = 64, pause_us = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (a == "--iterations") iterations = v;
    else if (a == "--size") size = v;
    else if (a == "--pause-us") pause_us = v;
    else Die("usage: wire-ping-pong [--iterations N] [--size BYTES] [--pause-us U]");
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) Die("socketpair");
  pid_t child = fork();
  if (child == 0) {
    close(fds[1]);
    return Echo(fds[0]);
  }
  close(fds[0]);
  {
    djava::wire::Connection c(fds[1]);
    std::string error;
    if (!djava::wire::ClientHandshake(&c, kSecret, "ping", &error)) Die(error);
    djava::wirepb::ClientHello m, got;
    m.set_service(std::string(static_cast<size_t>(size), 'p'));
    std::vector<double> us;
    const int warmup = iterations / 10;
    for (int i = 0; i < warmup + iterations; i++) {
      if (pause_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
      auto t0 = std::chrono::steady_clock::now();
      if (!c.Send(m) || !c.Receive(&got)) Die("round trip failed: " + c.error());
      auto t1 = std::chrono::steady_clock::now();
      if (i >= warmup) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    double sum = 0;
    for (double u : us) sum += u;
    std::printf("transport %s p50 %.2f us mean %.2f us p99 %.2f us\n", c.transport(),
                us[us.size() / 2], sum / us.size(), us[us.size() * 99 / 100]);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return 0;
}
