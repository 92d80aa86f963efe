//===- PeerLiveness.cpp - Is a peer rank's process still there? -*- C++ -*-===//
//
// Reads /proc: /proc/<pid>/stat gives the state letter of a process; a
// process that was killed is a zombie ('Z') until its launcher reaps it, and
// absent afterwards.
//
//===----------------------------------------------------------------------===//

#include "PeerLiveness.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::rt {

ProcessIdentity currentProcessIdentity() {
  ProcessIdentity self;
  std::memset(&self, 0, sizeof(self));
  gethostname(self.host, sizeof(self.host) - 1);
  if (std::FILE *file = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    if (!std::fgets(self.bootId, sizeof(self.bootId), file))
      self.bootId[0] = '\0';
    std::fclose(file);
  }
  struct stat info;
  if (::stat("/proc/self/ns/pid", &info) == 0)
    self.pidNamespace = static_cast<uint64_t>(info.st_ino);
  self.pid = static_cast<int32_t>(getpid());
  return self;
}

bool sameProcessSpace(const ProcessIdentity &self,
                      const ProcessIdentity &peer) {
  return self.pidNamespace != 0 && self.pidNamespace == peer.pidNamespace &&
         self.bootId[0] != '\0' &&
         std::strncmp(self.bootId, peer.bootId, sizeof(self.bootId)) == 0 &&
         std::strncmp(self.host, peer.host, sizeof(self.host)) == 0;
}

bool processHasExited(int32_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  std::FILE *file = std::fopen(path.c_str(), "r");
  if (!file)
    return errno == ENOENT;
  char buffer[512];
  size_t length = std::fread(buffer, 1, sizeof(buffer) - 1, file);
  std::fclose(file);
  buffer[length] = '\0';
  // "pid (comm) S ...": the command may contain spaces and parentheses, so
  // the state follows the last ')'.
  const char *close = std::strrchr(buffer, ')');
  if (!close || close[1] != ' ')
    return false;
  return close[2] == 'Z' || close[2] == 'X';
}

} // namespace loom::rt
