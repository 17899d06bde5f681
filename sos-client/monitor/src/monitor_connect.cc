// djava_monitor_connect: the one C ABI entry point of the monitor client that
// needs the wire library (the rest is in monitor_capi.cc). It opens one
// "monitor" connection to every sos-server shard, in shard order.
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "djava/monitor_client.h"
#include "monitor_capi_internal.h"
#include "wire/connection.h"
#include "wire_adapter.h"

using djava::wire_adapter::WriteError;

namespace {

// Names this node in other nodes' error messages ("node ... disconnected").
std::string NodeName() {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

}  // namespace

extern "C" djava_monitor_client* djava_monitor_connect(const char* shards, const char* secret_file,
                                                       uint32_t sos_node,
                                                       char* err, size_t err_len) {
  try {
    if (shards == nullptr || secret_file == nullptr) {
      WriteError("null shard list or secret file", err, err_len);
      return nullptr;
    }
    const std::vector<std::string> addresses = djava::wire::SplitAddressList(shards);
    if (addresses.empty()) {
      WriteError("no sos-server shards given", err, err_len);
      return nullptr;
    }
    std::vector<std::unique_ptr<djava::Channel>> channels;
    for (const auto& address : addresses) {
      std::string error;
      auto channel = djava::wire_adapter::Connect(address, secret_file, "monitor", &error);
      if (!channel) {
        WriteError("monitor service at " + address + ": " + error, err, err_len);
        return nullptr;  // the channels opened so far close here
      }
      channels.push_back(std::move(channel));
    }
    auto* c = new djava_monitor_client;
    c->impl = std::make_unique<djava::monitor::MonitorClient>(std::move(channels), NodeName(),
                                                              sos_node);
    c->impl->SetShardAddresses(addresses);
    return c;
  } catch (const std::exception& e) {
    WriteError(std::string("internal error: ") + e.what(), err, err_len);
  } catch (...) {
    WriteError("internal error", err, err_len);
  }
  return nullptr;
}
