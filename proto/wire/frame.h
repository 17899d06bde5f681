// Frames: every message on a djava connection is one frame, a 4-byte
// big-endian length followed by that many bytes (one protobuf message). A
// receiver sets a maximum frame size; a longer length prefix is an error that
// ends the connection before any of the frame is buffered.
#ifndef DJAVA_WIRE_FRAME_H_
#define DJAVA_WIRE_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace djava {
namespace wire {

constexpr size_t kFrameHeaderSize = 4;
constexpr uint32_t kDefaultMaxFrameSize = 16u << 20;

// Appends header and payload of one frame to *out.
void AppendFrame(const std::string& payload, std::string* out);

// Cuts a received byte stream into frames, however the bytes arrive.
class FrameDecoder {
 public:
  enum class Result { kFrame, kNeedMore, kTooLarge };

  explicit FrameDecoder(uint32_t max_frame_size) : max_frame_size_(max_frame_size) {}

  void set_max_frame_size(uint32_t max) { max_frame_size_ = max; }
  uint32_t max_frame_size() const { return max_frame_size_; }

  void Feed(const char* data, size_t n);

  // kFrame: *frame is the next payload. kTooLarge: the stream is unusable
  // (*declared_length says what it claimed).
  Result Next(std::string* frame, uint32_t* declared_length = nullptr);

  size_t buffered() const { return buffer_.size() - start_; }
  // Next() would return kFrame (or kTooLarge) without more bytes.
  bool HasFrame() const;

 private:
  // The length prefix of the next frame (its header must be buffered).
  uint32_t NextLength() const;

  std::string buffer_;
  size_t start_ = 0;
  uint32_t max_frame_size_;
};

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_FRAME_H_
