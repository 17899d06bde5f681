// HMAC-SHA256, constant-time comparison and random bytes, from OpenSSL.
#ifndef DJAVA_WIRE_HMAC_H_
#define DJAVA_WIRE_HMAC_H_

#include <string>

namespace djava {
namespace wire {

std::string HmacSha256(const std::string& key, const std::string& data);
bool ConstantTimeEqual(const std::string& a, const std::string& b);
// n cryptographically random bytes; empty if the system cannot provide them.
std::string RandomBytes(size_t n);

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_HMAC_H_
