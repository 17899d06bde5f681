// sos-server: the home of djava's shared objects (the directory and home
// copies of chunks) and of the distributed monitor service.
//
//   sos-server [--listen HOST:PORT] [--answer-timeout-ms N] [--no-monitor-leases]
//              [--no-collection] [--no-migratory] [--no-data-with-locks]
//              [--no-node-handoffs] [--no-objects-along] [--no-data-with-release]
//              [--transport auto|ucx|tcp] [--shard I/N] [--trace-monitors FILE]
//              [--trace-sos FILE] --secret-file F
//
// Listens on 127.0.0.1:7701 unless told otherwise, logs to stderr, prints
// statistics on SIGUSR1 and at exit, exits 0 on SIGTERM or SIGINT.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "monitor_host.h"
#include "sos/ids.h"
#include "sos_service.h"
#include "wire/daemon.h"
#include "wire/secret.h"
#include "wire/service_host.h"
#include "wire/ucx_channel.h"

namespace {

constexpr char kDefaultListen[] = "127.0.0.1:7701";

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "sos-server: %s\n"
               "usage: sos-server [--listen HOST:PORT] [--answer-timeout-ms N] [--no-monitor-leases]\n"
               "                  [--no-collection] [--no-migratory] [--no-data-with-locks]\n"
               "                  [--no-node-handoffs] [--no-objects-along] [--no-data-with-release]\n"
               "                  [--transport auto|ucx|tcp] [--shard I/N] [--trace-monitors FILE]\n"
               "                  [--trace-sos FILE] --secret-file FILE\n"
               "  --listen             address to serve on (default %s; loopback unless told)\n"
               "  --answer-timeout-ms  drop a node that leaves an invalidate or flush\n"
               "                       unanswered this long (default %d)\n"
               "  --no-monitor-leases  every monitor enter and exit goes to the server (no\n"
               "                       node keeps a lock nobody else wants; for measurement)\n"
               "  --no-collection      keep every chunk until its program ends (no distributed\n"
               "                       garbage collection while it runs; for measurement)\n"
               "  --no-migratory       answer every read with a read copy, also of a chunk\n"
               "                       nodes take turns to read and write (by default such\n"
               "                       a read gets the only copy: one transaction a turn)\n"
               "  --no-data-with-locks a monitor handed to another node does not bring the\n"
               "                       data its holder wrote along (each piece then faults\n"
               "                       in on its own; for measurement)\n"
               "  --no-node-handoffs   a Java monitor's grant names none of the node's other\n"
               "                       threads queued for it (each then gets its own grant\n"
               "                       in turn, FIFO; for measurement)\n"
               "  --no-objects-along   the new objects a flushed chunk names, which its node\n"
               "                       sends along, wait at home for a request instead of\n"
               "                       going to the flush's requester (for measurement)\n"
               "  --no-data-with-release\n"
               "                       a monitor's holder does not hear that another node\n"
               "                       wants it: what its node wrote under it waits for the\n"
               "                       next holder's flush (for measurement)\n"
               "  --transport          what nodes' connections travel on after the handshake:\n"
               "                       ucx (shared memory, RDMA) or tcp; auto takes ucx from\n"
               "                       nodes that offer it (default: $DJAVA_TRANSPORT, else auto)\n"
               "  --shard I/N          this server is shard I (from 0) of N that split the\n"
               "                       directory and the monitors; shard 0 numbers the nodes,\n"
               "                       and every node lists the N servers in this order\n"
               "                       (default 0/1)\n"
               "  --trace-monitors     append a line to FILE for every monitor request and\n"
               "                       event (time, node, message): for debugging\n"
               "  --trace-sos          the same for the shared-object cache's requests,\n"
               "                       answers, flushes and invalidations (bytes as sizes)\n"
               "  --secret-file        the cluster secret, a file of mode 0600\n",
               why.c_str(), kDefaultListen, djava::sos::SosService::Options().answer_timeout_ms);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen = kDefaultListen;
  std::string secret_file;
  std::string monitor_trace_file;
  std::string sos_trace_file;
  djava::sos::SosService::Options options;
  djava::monitor::MonitorTable::Options monitor_options;
  bool data_with_locks = true;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") Usage("help");
    if (a == "--no-monitor-leases") {
      monitor_options.leases = false;
      continue;
    }
    if (a == "--no-node-handoffs") {
      monitor_options.node_handoffs = false;
      continue;
    }
    if (a == "--data-with-release") {  // the default
      monitor_options.wanted_notices = true;
      continue;
    }
    if (a == "--no-data-with-release") {
      monitor_options.wanted_notices = false;
      continue;
    }
    if (a == "--no-objects-along") {
      options.objects_along = false;
      continue;
    }
    if (a == "--no-collection") {
      options.collect_check_ms = 0;
      continue;
    }
    if (a == "--migratory") {  // the default; kept so older scripts still start
      options.migratory = true;
      continue;
    }
    if (a == "--no-migratory") {
      options.migratory = false;
      continue;
    }
    if (a == "--data-with-locks") {  // the default; kept so older scripts still start
      data_with_locks = true;
      continue;
    }
    if (a == "--no-data-with-locks") {
      data_with_locks = false;
      continue;
    }
    if (i + 1 >= argc) Usage("missing value for " + a);
    const std::string v = argv[++i];
    if (a == "--listen") {
      listen = v;
    } else if (a == "--secret-file") {
      secret_file = v;
    } else if (a == "--trace-monitors") {
      monitor_trace_file = v;
    } else if (a == "--trace-sos") {
      sos_trace_file = v;
    } else if (a == "--transport") {
      djava::wire::Transport t;
      if (!djava::wire::ParseTransport(v, &t))
        Usage("--transport takes auto, ucx or tcp, not '" + v + "'");
      djava::wire::SetProcessTransport(t);
    } else if (a == "--shard") {
      unsigned shard = 0, shards = 0;
      char tail = 0;
      if (std::sscanf(v.c_str(), "%u/%u%c", &shard, &shards, &tail) != 2 || shards < 1 ||
          shards > djava::sos::kMaxShards || shard >= shards)
        Usage("--shard takes I/N with 0 <= I < N <= " + std::to_string(djava::sos::kMaxShards) +
              ", not '" + v + "'");
      options.shard = shard;
      options.shards = shards;
    } else if (a == "--answer-timeout-ms") {
      char* end = nullptr;
      const long ms = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || ms < 1 || ms > 24 * 3600 * 1000)
        Usage("--answer-timeout-ms takes milliseconds from 1 to 86400000, not '" + v + "'");
      options.answer_timeout_ms = static_cast<int>(ms);
    } else {
      Usage("unknown option " + a);
    }
  }
  if (secret_file.empty()) Usage("--secret-file is required");
  djava::wire::Transport transport;
  std::string transport_error;
  if (!djava::wire::ProcessTransport(&transport, &transport_error)) Usage(transport_error);
  // A bare port (or ":port") means loopback: binding elsewhere takes a host.
  if (listen.find(':') == std::string::npos) listen = ":" + listen;
  if (listen[0] == ':') listen = "127.0.0.1" + listen;

  std::string secret, error;
  if (!djava::wire::LoadSecret(secret_file, &secret, &error)) {
    std::fprintf(stderr, "sos-server: %s\n", error.c_str());
    return 1;
  }

  // The collector traces the refs of home copies; with the directory split,
  // a chunk's referrers may be at home on other shards, which this one
  // cannot see, so chunks stay until their program ends (docs/SOS.md).
  const bool collect_off_for_shards = options.shards > 1 && options.collect_check_ms > 0;
  if (options.shards > 1) options.collect_check_ms = 0;

  // Before any thread starts (the service's watchdog is one).
  djava::wire::DaemonSignals signals;
  const djava::wire::ServiceHost::Log log = djava::wire::StderrLog("sos-server");
  djava::sos::SosService sos(options, log);
  if (!sos_trace_file.empty() && !sos.TraceTo(sos_trace_file, &error)) {
    std::fprintf(stderr, "sos-server: --trace-sos: %s\n", error.c_str());
    return 1;
  }
  djava::monitor::ChunkMover mover(&sos);  // outlives the monitor service, which calls it
  djava::wire::ServiceHost host(secret, log);
  host.AddService("sos", [&](std::unique_ptr<djava::wire::Connection> c, const std::string& peer) {
    sos.ServeMain(std::move(c), peer);
  });
  host.AddService("sos-bypass",
                  [&](std::unique_ptr<djava::wire::Connection> c, const std::string& peer) {
                    sos.ServeBypass(std::move(c), peer);
                  });
  djava::monitor::MonitorHost monitors(log, monitor_options,
                                       [&](uint64_t program) { sos.FreeProgram(program); });
  if (data_with_locks) monitors.SetDataMover(&mover);
  if (!monitor_trace_file.empty() && !monitors.TraceTo(monitor_trace_file, &error)) {
    std::fprintf(stderr, "sos-server: --trace-monitors: %s\n", error.c_str());
    return 1;
  }
  monitors.Register(&host);
  host.OnStop([&] { sos.Stop(); });
  if (!host.Listen(listen, &error)) {
    std::fprintf(stderr, "sos-server: cannot listen on %s: %s\n", listen.c_str(), error.c_str());
    return 1;
  }
  auto stats = [&] {
    log("statistics: " + sos.Stats());
    log("monitor statistics: " + monitors.Stats());
  };

  std::string where = listen.substr(0, listen.rfind(':'));
  log("listening on " + where + ":" + std::to_string(host.port()) + " (transport " +
      djava::wire::TransportName(transport) +
      (options.shards > 1 ? ", shard " + std::to_string(options.shard) + " of " +
                                std::to_string(options.shards)
                          : std::string()) +
      ")");
  if (collect_off_for_shards)
    log("no garbage collection while programs run: the directory is split over " +
        std::to_string(options.shards) + " shards; chunks go when their program ends");
  return signals.Run(&host, stats, log);
}
