// monitor-inproc-bench: the monitor client and service, and the thread
// manager client and service, joined in one process by in-memory channels
// (test/native/thread-manager/inproc.h). It measures the protocol and the
// code paths without TCP: the lease-held number is the real one (that path
// sends nothing); the others are lower bounds for the loopback numbers of
// monitor-bench.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "inproc.h"
#include "monitor_client.h"
#include "tm_client.h"

using namespace djava;
using Clock = std::chrono::steady_clock;

namespace {

double Ns(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

void Report(const char* name, std::vector<double> v, double scale, const char* unit) {
  std::sort(v.begin(), v.end());
  std::printf("%-52s %10.2f %s  (p50 of %zu; p90 %.2f)\n", name, v[v.size() / 2] / scale, unit,
              v.size(), v[v.size() * 9 / 10] / scale);
}

std::unique_ptr<monitor::MonitorClient> Node(test::InProcMonitorHost* h) {
  std::vector<std::unique_ptr<Channel>> s;
  s.push_back(h->Connect());
  return std::make_unique<monitor::MonitorClient>(std::move(s));
}

std::vector<double> Uncontended(monitor::MonitorClient* c, int samples, int batch) {
  monitor::LocalThread t{1, 1};
  c->Enter(5, t);
  c->Exit(5, t);
  std::vector<double> v;
  for (int s = 0; s < samples; s++) {
    auto t0 = Clock::now();
    for (int i = 0; i < batch; i++) {
      c->Enter(5, t);
      c->Exit(5, t);
    }
    v.push_back(Ns(t0, Clock::now()) / batch);
  }
  return v;
}

std::vector<double> Handoff(monitor::MonitorClient* a, monitor::MonitorClient* b, int rounds) {
  std::vector<double> v;
  monitor::MonitorClient* n[2] = {a, b};
  for (int r = 0; r < rounds; r++) {
    auto* from = n[r % 2];
    auto* to = n[1 - r % 2];
    monitor::LocalThread tf{1, 10u + r % 2}, tt{1, 11u - r % 2};
    from->Enter(7, tf);
    Clock::time_point got;
    std::thread w([&] {
      to->Enter(7, tt);
      got = Clock::now();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    auto released = Clock::now();
    from->Exit(7, tf);
    w.join();
    v.push_back(Ns(released, got));
    to->Exit(7, tt);
  }
  return v;
}

}  // namespace

int main() {
  monitor::MonitorTable::Options with, without;
  without.leases = false;
  test::InProcMonitorHost lease_host(with), plain_host(without);
  auto l1 = Node(&lease_host), l2 = Node(&lease_host);
  auto p1 = Node(&plain_host), p2 = Node(&plain_host);

  std::vector<double> ping;
  for (int i = 0; i < 2000; i++) {
    auto t0 = Clock::now();
    p1->Ping();
    ping.push_back(Ns(t0, Clock::now()));
  }
  Report("in-memory ping-pong (Ping)", ping, 1e3, "us");
  Report("uncontended enter+exit, lease held", Uncontended(l1.get(), 200, 10000), 1, "ns");
  Report("uncontended enter+exit, no lease (in-memory)", Uncontended(p1.get(), 2000, 1), 1e3,
         "us");
  Report("hand-off between two nodes, no lease (in-memory)", Handoff(p1.get(), p2.get(), 300),
         1e3, "us");
  Report("hand-off between two nodes, leases on (in-memory)", Handoff(l1.get(), l2.get(), 300),
         1e3, "us");

  tm::TmService::Options o;
  test::InProcTmHost tm_host(o);
  tm::TmClient server(tm_host.Connect()), launcher(tm_host.Connect());
  server.RegisterServer("bench", 1, nullptr);
  launcher.RegisterProgram(1, "bench", "");
  std::vector<double> start;
  for (uint64_t t = 1; t <= 500; t++) {
    auto t0 = Clock::now();
    launcher.Submit(1, t, false);
    djava_tm_event ev;
    do server.NextEvent(&ev, 5000);
    while (ev.kind != DJAVA_TM_EV_ASSIGN);
    start.push_back(Ns(t0, Clock::now()));
    server.ThreadEnded(1, t, false, "");
    launcher.WaitThread(1, t, 5000);
  }
  Report("thread start, submit -> assignment (in-memory)", start, 1e3, "us");
  return 0;
}
