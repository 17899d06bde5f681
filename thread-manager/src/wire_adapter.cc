#include "wire_adapter.h"

#include <cstdio>

#include "wire/connection.h"
#include "wire/handshake.h"
#include "wire/secret.h"

namespace djava {
namespace wire_adapter {

namespace {

// The clients' Channel over an authenticated wire::Connection. Send is
// already safe from several threads; Receive has one reader (the client's
// reader thread), as the Channel contract says.
class WireChannel : public Channel {
 public:
  explicit WireChannel(std::unique_ptr<wire::Connection> conn) : conn_(std::move(conn)) {}

  bool Send(const google::protobuf::MessageLite& msg) override { return conn_->Send(msg); }
  bool Receive(google::protobuf::MessageLite* msg) override { return conn_->Receive(msg); }
  void Shutdown() override { conn_->Shutdown(); }
  std::string Error() const override {
    std::string e = conn_->error();
    return e.empty() ? "connection closed" : e;
  }

 private:
  std::unique_ptr<wire::Connection> conn_;
};

}  // namespace

std::unique_ptr<Channel> Connect(const std::string& host_port, const std::string& secret_file,
                                 const std::string& service, std::string* error) {
  std::string secret;
  if (!wire::LoadSecret(secret_file, &secret, error)) return nullptr;
  int fd = wire::ConnectTcp(host_port, error);
  if (fd < 0) return nullptr;
  auto conn = std::make_unique<wire::Connection>(fd);
  if (!wire::ClientHandshake(conn.get(), secret, service, error)) return nullptr;
  return std::make_unique<WireChannel>(std::move(conn));
}

void WriteError(const std::string& why, char* err, size_t err_len) {
  if (err != nullptr && err_len > 0) std::snprintf(err, err_len, "%s", why.c_str());
}

}  // namespace wire_adapter
}  // namespace djava
