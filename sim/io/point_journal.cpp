#include "sim/io/point_journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/errors.h"

namespace attnsim::io {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHashFile = "sweep_hash";
constexpr const char* kPrefix = "point-";
constexpr const char* kSuffix = ".rec";

void write_durably(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw core::SimError("cannot write " + tmp.string());
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw core::SimError("cannot write " + tmp.string());
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw core::SimError("cannot rename " + tmp.string());
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

PointJournal::PointJournal(std::string dir, std::string sweep_hash)
    : dir_(std::move(dir)), sweep_hash_(std::move(sweep_hash)) {}

bool PointJournal::exists() const { return fs::exists(dir_); }

void PointJournal::create() {
  std::error_code ec;
  if (!fs::create_directory(dir_, ec) || ec)
    throw core::SimError("cannot create journal directory " + dir_ + (ec ? ": " + ec.message() : ""));
  write_durably(fs::path(dir_) / kHashFile, sweep_hash_ + "\n");
}

std::vector<PointRecord> PointJournal::load() const {
  const fs::path hash_file = fs::path(dir_) / kHashFile;
  if (!fs::exists(hash_file))
    throw core::ConfigError(core::ConfigProblem{dir_, 0, "", "not an attnsim sweep journal"});
  std::string hash = read_all(hash_file);
  while (!hash.empty() && hash.back() == '\n') hash.pop_back();
  if (hash != sweep_hash_)
    throw core::ConfigError(core::ConfigProblem{
        dir_, 0, "", "journal belongs to a different sweep file (" + hash + ", expected " + sweep_hash_ +
                         "); remove it or run the original sweep"});
  std::vector<PointRecord> points;
  for (const auto& e : fs::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0 || name.size() < 5 || name.substr(name.size() - 4) != kSuffix) continue;
    try {
      points.push_back(parse_point(read_all(e.path())));
    } catch (const std::runtime_error&) {
      continue;  // unreadable (should not happen with rename); the point simply runs again
    }
  }
  std::sort(points.begin(), points.end(), [](const PointRecord& a, const PointRecord& b) { return a.index < b.index; });
  return points;
}

void PointJournal::append(const PointRecord& p) {
  write_durably(fs::path(dir_) / (kPrefix + std::to_string(p.index) + kSuffix), serialize_point(p));
}

void PointJournal::remove() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace attnsim::io
