// Test helpers that make special files inside a test's own temporary directory (never under
// /dev): a FIFO with a reader that cannot block forever, a socket, device nodes (root only).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace attnsim::testing {

inline bool is_root() { return ::geteuid() == 0; }

// What `path` itself is (lstat): S_IFIFO, S_IFCHR, S_IFLNK, ...; 0 if it does not exist.
inline mode_t file_type(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

inline dev_t device_number(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_rdev : 0;
}

inline void make_fifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0644) != 0) throw std::runtime_error("mkfifo " + path + ": " + std::strerror(errno));
}

// A listening-less Unix socket bound at `path` (the socket file stays after the close).
inline void make_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  const int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::close(fd);
  if (rc != 0) throw std::runtime_error("bind " + path + ": " + std::strerror(errno));
}

// A device node in the test's directory (root only): mknod(2), e.g. (S_IFCHR, 1, 3) is a null
// device, (S_IFCHR, 1, 7) a full one; (S_IFBLK, 240, 0) a block device of the experimental range
// that no driver serves.
inline void make_device(const std::string& path, mode_t type, unsigned major_no, unsigned minor_no) {
  if (::mknod(path.c_str(), type | 0644, makedev(major_no, minor_no)) != 0)
    throw std::runtime_error("mknod " + path + ": " + std::strerror(errno));
}

// Reads a FIFO on a thread from before the writer opens it until the writer closes it, or until
// `timeout_ms` without news (then timed_out()): a test never blocks forever on a FIFO.
class FifoReader {
 public:
  explicit FifoReader(const std::string& path, int timeout_ms = 60000) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);  // at once: a writer's open then does not block
    if (fd_ < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
    thread_ = std::thread([this, timeout_ms] {
      char buf[65536];
      for (;;) {
        pollfd p{fd_, POLLIN, 0};
        // Linux reports POLLHUP on a FIFO only once a writer has come and gone.
        const int r = ::poll(&p, 1, timeout_ms);
        if (r == 0) {
          timed_out_ = true;
          return;
        }
        if (r < 0 && errno == EINTR) continue;
        const ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n > 0) data_.append(buf, static_cast<std::size_t>(n));
        else if (n == 0) return;
        else if (errno != EAGAIN && errno != EINTR) return;
      }
    });
  }
  ~FifoReader() {
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  // Waits for the writer to close; what it wrote.
  const std::string& finish() {
    if (thread_.joinable()) thread_.join();
    return data_;
  }
  bool timed_out() const { return timed_out_; }

 private:
  int fd_ = -1;
  std::thread thread_;
  std::string data_;
  bool timed_out_ = false;
};

}  // namespace attnsim::testing
