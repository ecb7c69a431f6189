#include "sim/io/durable_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace attnsim::io {

namespace {

// The live temporaries, for remove_live_temporaries() in a signal handler: fixed storage (no
// allocation there) and a lock-free state per slot (0 free, 1 being filled or cleared, 2 live).
constexpr int kSlots = 64;
constexpr std::size_t kPathBytes = 4096;
struct Slot {
  std::atomic<int> state{0};
  char path[kPathBytes];
};
static_assert(std::atomic<int>::is_always_lock_free, "read from a signal handler");
Slot g_slots[kSlots];

int list_temporary(const std::string& path) {
  if (path.size() >= kPathBytes) return -1;  // not listed: still removed on every error path
  for (int i = 0; i < kSlots; ++i) {
    int free = 0;
    if (!g_slots[i].state.compare_exchange_strong(free, 1)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2);
    return i;
  }
  return -1;
}

void unlist_temporary(int slot) {
  if (slot < 0) return;
  g_slots[slot].state.store(1);
  g_slots[slot].state.store(0);
}

}  // namespace

OutputError::OutputError(const std::string& path, const std::string& what)
    : core::ConfigError(core::ConfigProblem{path, 0, "", what}), path_(path) {}

OutputError output_error(const std::string& path, int err, const std::string& action) {
  std::string reason = std::strerror(err);
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  return OutputError(path, action + ": " + reason);
}

namespace {

// Writes all of `data` to `fd` (continuing after short writes and EINTR); 0 or the errno value.
int write_fd(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

void write_file_durably(const std::string& path, const void* data, std::size_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw output_error(path, errno);
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(path.c_str());
    return output_error(path, err);
  };
  if (const int err = write_fd(fd, data, size)) throw fail(err);
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

TemporaryFile::TemporaryFile(const std::string& base, std::string shown) : shown_(std::move(shown)) {
  for (int n = 0; n < 1000; ++n) {
    const std::string name = n == 0 ? base : base + "-" + std::to_string(n);
    fd_ = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ >= 0) {
      path_ = name;
      slot_ = list_temporary(path_);
      return;
    }
    if (errno != EEXIST) break;
  }
  throw output_error(shown_, errno, "cannot create a temporary file beside it");
}

TemporaryFile::~TemporaryFile() { discard(); }

void TemporaryFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!committed_ && !path_.empty()) ::unlink(path_.c_str());
  unlist_temporary(slot_);
  slot_ = -1;
}

void TemporaryFile::write_all(const void* data, std::size_t size) {
  auto fail = [&](int err) {
    discard();
    return output_error(shown_, err);
  };
  if (fd_ < 0) throw fail(EBADF);
  if (const int err = write_fd(fd_, data, size)) throw fail(err);
  // A file system may report a full disk only when the data reach it (fsync, close).
  if (::fsync(fd_) != 0 && errno != EINVAL) throw fail(errno);  // EINVAL: a file that cannot sync
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && errno != EINTR) throw fail(errno);
}

void TemporaryFile::commit(const std::string& target) {
  if (std::rename(path_.c_str(), target.c_str()) != 0) {
    const int err = errno;
    discard();
    throw output_error(shown_, err, "cannot rename " + path_ + " to it");
  }
  committed_ = true;
  unlist_temporary(slot_);
  slot_ = -1;
}

void replace_file_atomically(const std::string& target, const void* data, std::size_t size,
                             const std::string& shown, const std::string& tmp_base) {
  TemporaryFile tmp(tmp_base.empty() ? target + ".tmp-" + std::to_string(::getpid()) : tmp_base,
                    shown.empty() ? target : shown);
  tmp.write_all(data, size);
  tmp.commit(target);
}

void remove_live_temporaries() noexcept {
  for (auto& s : g_slots)
    if (s.state.load() == 2) ::unlink(s.path);
}

}  // namespace attnsim::io
