// MessageTrace: a daemon's record of the messages it takes and sends, one
// line each (monotonic ns, node, direction, the message in protobuf's
// one-line text form, bytes fields as their size), for following a stall
// or a protocol's cost message by message: sos-server --trace-monitors and
// --trace-sos. Lines are written as they happen, so the file of a run that
// hangs is whole. Thread-safe; off (and free) until Open.
#ifndef DJAVA_SOS_MESSAGE_TRACE_H_
#define DJAVA_SOS_MESSAGE_TRACE_H_

#include <google/protobuf/text_format.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace google {
namespace protobuf {
class Message;
}  // namespace protobuf
}  // namespace google

namespace djava {
namespace sos {

class MessageTrace {
 public:
  MessageTrace();
  ~MessageTrace();
  MessageTrace(const MessageTrace&) = delete;
  MessageTrace& operator=(const MessageTrace&) = delete;

  // Appends to path from now on. False, with *error, if it cannot be opened.
  bool Open(const std::string& path, std::string* error);
  bool on() const { return file_.load(std::memory_order_acquire) != nullptr; }
  // way: "<-" taken from the node, "->" sent to it, "=>" sent to it later
  // (a grant that waited for its object's data).
  void Line(uint64_t node, const char* way, const google::protobuf::Message& m);

 private:
  std::mutex mu_;  // one line at a time
  std::atomic<std::FILE*> file_{nullptr};
  google::protobuf::TextFormat::Printer printer_;
};

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_MESSAGE_TRACE_H_
