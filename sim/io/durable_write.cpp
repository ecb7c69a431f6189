#include "sim/io/durable_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace attnsim::io {

OutputError::OutputError(const std::string& path, const std::string& what)
    : core::ConfigError(core::ConfigProblem{path, 0, "", what}), path_(path) {}

OutputError output_error(const std::string& path, int err, const std::string& action) {
  std::string reason = std::strerror(err);
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  return OutputError(path, action + ": " + reason);
}

void write_file_durably(const std::string& path, const void* data, std::size_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw output_error(path, errno);
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(path.c_str());
    return output_error(path, err);
  };
  const char* p = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail(errno);
    if (n == 0) throw fail(EIO);
    done += static_cast<std::size_t>(n);
  }
  // A file system may report a full disk only when the data reach it (fsync, close).
  if (::fsync(fd) != 0 && errno != EINVAL) throw fail(errno);  // EINVAL: a file that cannot sync
  if (::close(fd) != 0 && errno != EINTR) {
    const int err = errno;
    ::unlink(path.c_str());
    throw output_error(path, err);
  }
}

void rename_or_remove(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) == 0) return;
  const int err = errno;
  std::remove(from.c_str());
  throw output_error(to, err, "cannot rename " + from + " to it");
}

}  // namespace attnsim::io
