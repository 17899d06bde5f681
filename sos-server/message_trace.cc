#include "message_trace.h"

#include <google/protobuf/message.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>

namespace djava {
namespace sos {

namespace {

// A chunk's bytes say nothing a reader of the trace can use, and a grant's
// may be megabytes: their size stands for them.
class BytesAsSize : public google::protobuf::TextFormat::FastFieldValuePrinter {
 public:
  void PrintBytes(const std::string& val,
                  google::protobuf::TextFormat::BaseTextGenerator* generator) const override {
    generator->PrintString("<" + std::to_string(val.size()) + " bytes>");
  }
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

MessageTrace::MessageTrace() {
  printer_.SetSingleLineMode(true);
  printer_.SetDefaultFieldValuePrinter(new BytesAsSize());  // the printer owns it
}

MessageTrace::~MessageTrace() {
  std::FILE* f = file_.exchange(nullptr);
  if (f != nullptr) std::fclose(f);
}

bool MessageTrace::Open(const std::string& path, std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  std::setvbuf(f, nullptr, _IOLBF, 0);
  std::lock_guard<std::mutex> l(mu_);
  std::FILE* old = file_.exchange(f, std::memory_order_acq_rel);
  if (old != nullptr) std::fclose(old);
  return true;
}

void MessageTrace::Line(uint64_t node, const char* way, const google::protobuf::Message& m) {
  if (!on()) return;
  std::string text;
  printer_.PrintToString(m, &text);
  if (!text.empty() && text.back() == ' ') text.pop_back();
  std::lock_guard<std::mutex> l(mu_);
  std::FILE* f = file_.load(std::memory_order_relaxed);
  std::fprintf(f, "%" PRId64 " node %" PRIu64 " %s %s\n", NowNs(), node, way, text.c_str());
}

}  // namespace sos
}  // namespace djava
