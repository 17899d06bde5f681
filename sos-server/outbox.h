// Outbox: the ordered, never-blocking way out to one node. Post() is called
// with directory locks held, so it must not wait for the network: it writes
// at once when the connection's channel takes the bytes (the common case,
// and the fast one: no thread hand-off), and otherwise queues them for the
// outbox's own writer thread. A node that stops reading cannot stall the
// server: once more than max_queued bytes wait for it, the outbox gives up
// on it and shuts its channel, which ends the node's session.
#ifndef DJAVA_SOS_OUTBOX_H_
#define DJAVA_SOS_OUTBOX_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "wire/channel.h"

namespace djava {
namespace sos {

class Outbox {
 public:
  // channel stays its Connection's; on_failure gets why the outbox gave up.
  Outbox(wire::Channel* channel, size_t max_queued,
         std::function<void(const std::string&)> on_failure);
  ~Outbox();  // Close()s.
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Appends whole frames (already framed) in order. Ignored after failure
  // or Close. hold: the caller will call SendHeld() soon, and the bytes
  // may wait for it in the queue (up to kMaxHeld of them), so that several
  // posts leave in one write. A post from another thread meanwhile lands
  // behind them and sends them with its own.
  void Post(const std::string& frames, bool hold = false);
  // Sends what posts with hold left queued.
  void SendHeld();
  // Stops the writer; unsent bytes are dropped (the node is going away).
  void Close();

  uint64_t bytes_sent() const;

  // Held bytes past this are sent without waiting for SendHeld: the queue
  // of a node that reads stays far from max_queued.
  static constexpr size_t kMaxHeld = 256 * 1024;

 private:
  void WriterLoop();
  void FailLocked(const std::string& why);
  // Writes bytes from *off on, as far as the channel takes them now without
  // waiting, advancing *off; false if the outbox failed.
  bool SendNowLocked(const std::string& bytes, size_t* off);
  // The same for pending_ (not while the writer is writing), dropping what
  // was written.
  bool SendPendingLocked();

  wire::Channel* const channel_;
  const size_t max_queued_;
  const std::function<void(const std::string&)> on_failure_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string pending_;
  bool writing_ = false;  // the writer thread owns bytes taken from pending_
  bool writer_due_ = false;  // the writer is to send pending_ (held bytes wait)
  size_t in_writer_ = 0;  // how many
  bool closed_ = false;
  bool failed_ = false;
  uint64_t bytes_sent_ = 0;
  std::thread writer_;
};

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_OUTBOX_H_
