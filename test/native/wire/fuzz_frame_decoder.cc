// libFuzzer target: arbitrary bytes, arriving in arbitrary pieces, through the
// frame decoder and the handshake message parser. Nothing may crash, hang or
// read out of bounds; an oversized frame must stop the stream.
#include <cstddef>
#include <cstdint>
#include <string>

#include "wire.pb.h"
#include "wire/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  djava::wire::FrameDecoder decoder(1024);
  size_t pos = 0;
  std::string frame;
  while (pos < size) {
    // The first byte of each piece chooses the piece's length.
    size_t piece = 1 + data[pos] % 64;
    pos++;
    if (pos + piece > size) piece = size - pos;
    decoder.Feed(reinterpret_cast<const char*>(data + pos), piece);
    pos += piece;
    while (true) {
      auto result = decoder.Next(&frame);
      if (result == djava::wire::FrameDecoder::Result::kTooLarge) return 0;
      if (result == djava::wire::FrameDecoder::Result::kNeedMore) break;
      if (frame.size() > 1024) __builtin_trap();
      djava::wirepb::ClientHello hello;
      hello.ParseFromString(frame);
    }
  }
  return 0;
}
