// The cluster secret: a file only its owner may read (mode 0600 or stricter),
// holding at least 16 bytes. Every djava connection proves knowledge of it.
#ifndef DJAVA_WIRE_SECRET_H_
#define DJAVA_WIRE_SECRET_H_

#include <string>

namespace djava {
namespace wire {

constexpr size_t kMinSecretSize = 16;

// Reads the secret (trailing whitespace removed). False, with *error naming
// the file and the problem, if it is missing, readable by others, or short.
bool LoadSecret(const std::string& path, std::string* secret, std::string* error);

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_SECRET_H_
