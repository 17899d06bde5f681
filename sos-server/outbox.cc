#include "outbox.h"


namespace djava {
namespace sos {

Outbox::Outbox(wire::Channel* channel, size_t max_queued,
               std::function<void(const std::string&)> on_failure)
    : channel_(channel), max_queued_(max_queued), on_failure_(std::move(on_failure)) {
  writer_ = std::thread([this] { WriterLoop(); });
}

Outbox::~Outbox() { Close(); }

void Outbox::Close() {
  {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

uint64_t Outbox::bytes_sent() const {
  std::lock_guard<std::mutex> l(mu_);
  return bytes_sent_;
}

void Outbox::FailLocked(const std::string& why) {
  if (failed_) return;
  failed_ = true;
  pending_.clear();
  // Ends the node's reader too, which runs the node's cleanup.
  channel_->Shutdown();
  if (on_failure_) on_failure_(why);
}

void Outbox::Post(const std::string& frames, bool hold) {
  std::lock_guard<std::mutex> l(mu_);
  if (closed_ || failed_) return;
  if (hold && pending_.size() + frames.size() <= kMaxHeld) {
    pending_.append(frames);  // SendHeld, or the writer if it is busy, sends them
    return;
  }
  size_t off = 0;
  if (!writing_ && pending_.empty()) {
    if (!SendNowLocked(frames, &off)) return;
    if (off == frames.size()) return;
  }
  pending_.append(frames, off, std::string::npos);
  if (pending_.size() + in_writer_ > max_queued_) {
    FailLocked("node is not reading: " + std::to_string(pending_.size()) +
               " bytes queued for it");
    return;
  }
  writer_due_ = true;
  cv_.notify_one();
}

void Outbox::SendHeld() {
  std::lock_guard<std::mutex> l(mu_);
  if (closed_ || failed_ || pending_.empty()) return;
  if (writing_) {
    writer_due_ = true;  // the writer takes them after its batch
    cv_.notify_one();
    return;
  }
  if (SendPendingLocked() && !pending_.empty()) {
    writer_due_ = true;
    cv_.notify_one();
  }
}

bool Outbox::SendNowLocked(const std::string& bytes, size_t* off) {
  while (*off < bytes.size()) {
    std::string error;
    ssize_t n = channel_->TryWrite(bytes.data() + *off, bytes.size() - *off, &error);
    if (n > 0) {
      *off += static_cast<size_t>(n);
      bytes_sent_ += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) break;
    FailLocked(error);
    return false;
  }
  return true;
}

bool Outbox::SendPendingLocked() {
  size_t off = 0;
  const bool ok = SendNowLocked(pending_, &off);
  if (ok) pending_.erase(0, off);
  return ok;
}

void Outbox::WriterLoop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [this] { return closed_ || (writer_due_ && !pending_.empty() && !failed_); });
    if (closed_) return;
    writer_due_ = false;
    std::string batch;
    batch.swap(pending_);
    writing_ = true;
    in_writer_ = batch.size();
    l.unlock();
    size_t off = 0;
    std::string error;
    while (off < batch.size()) {
      ssize_t n = channel_->TryWrite(batch.data() + off, batch.size() - off, &error);
      if (n > 0) {
        off += static_cast<size_t>(n);
        continue;
      }
      if (n < 0) break;
      channel_->WaitWritable(100);
      std::lock_guard<std::mutex> g(mu_);
      if (closed_) break;
    }
    l.lock();
    writing_ = false;
    in_writer_ = 0;
    bytes_sent_ += off;
    if (!error.empty()) FailLocked(error);
  }
}

}  // namespace sos
}  // namespace djava
