// djava_tm_connect: the one C ABI entry point of the thread-manager client
// that needs the wire library (the rest is in tm_capi.cc).
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>

#include "djava/tm_client.h"
#include "tm_capi_internal.h"
#include "wire_adapter.h"

using djava::wire_adapter::WriteError;

extern "C" djava_tm_client* djava_tm_connect(const char* host_port, const char* secret_file,
                                             char* err, size_t err_len) {
  try {
    if (host_port == nullptr || secret_file == nullptr) {
      WriteError("null address or secret file", err, err_len);
      return nullptr;
    }
    std::string error;
    auto channel = djava::wire_adapter::Connect(host_port, secret_file, "tm", &error);
    if (!channel) {
      WriteError("thread manager " + std::string(host_port) + ": " + error, err, err_len);
      return nullptr;
    }
    auto* c = new djava_tm_client;
    c->impl = std::make_unique<djava::tm::TmClient>(std::move(channel));
    return c;
  } catch (const std::exception& e) {
    WriteError(std::string("internal error: ") + e.what(), err, err_len);
  } catch (...) {
    WriteError("internal error", err, err_len);
  }
  return nullptr;
}
