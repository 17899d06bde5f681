#include "wire/secret.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace djava {
namespace wire {

bool LoadSecret(const std::string& path, std::string* secret, std::string* error) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *error = "cannot read secret file " + path + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "secret file " + path + " is not a regular file";
    return false;
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    *error = "secret file " + path + " has mode " + mode +
             ": group and others must have no access (chmod 600 " + path + ")";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  if (!in.good() && !in.eof()) {
    *error = "cannot read secret file " + path;
    return false;
  }
  std::string s = content.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) {
    s.pop_back();
  }
  if (s.size() < kMinSecretSize) {
    *error = "secret file " + path + " holds " + std::to_string(s.size()) + " bytes; at least " +
             std::to_string(kMinSecretSize) + " are needed";
    return false;
  }
  *secret = s;
  return true;
}

}  // namespace wire
}  // namespace djava
