#include "wire/frame.h"

namespace djava {
namespace wire {

void AppendFrame(const std::string& payload, std::string* out) {
  const uint32_t n = static_cast<uint32_t>(payload.size());
  const char header[kFrameHeaderSize] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                                         static_cast<char>(n >> 8), static_cast<char>(n)};
  out->append(header, kFrameHeaderSize);
  out->append(payload);
}

void FrameDecoder::Feed(const char* data, size_t n) {
  // Drop consumed bytes before growing, so the buffer stays one frame long.
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  } else if (start_ > 4096 && start_ > buffer_.size() / 2) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(data, n);
}

uint32_t FrameDecoder::NextLength() const {
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + start_);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

bool FrameDecoder::HasFrame() const {
  if (buffered() < kFrameHeaderSize) return false;
  const uint32_t length = NextLength();
  return length > max_frame_size_ || buffered() >= kFrameHeaderSize + length;
}

FrameDecoder::Result FrameDecoder::Next(std::string* frame, uint32_t* declared_length) {
  if (buffered() < kFrameHeaderSize) return Result::kNeedMore;
  const uint32_t length = NextLength();
  if (declared_length != nullptr) *declared_length = length;
  if (length > max_frame_size_) return Result::kTooLarge;
  if (buffered() < kFrameHeaderSize + length) return Result::kNeedMore;
  frame->assign(buffer_, start_ + kFrameHeaderSize, length);
  start_ += kFrameHeaderSize + length;
  return Result::kFrame;
}

}  // namespace wire
}  // namespace djava
