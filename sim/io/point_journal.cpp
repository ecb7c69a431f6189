#include "sim/io/point_journal.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/errors.h"
#include "sim/io/durable_write.h"
#include "sim/io/output_target.h"

namespace attnsim::io {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHashFile = "sweep_hash";
constexpr const char* kPrefix = "point-";
constexpr const char* kSuffix = ".rec";

// Temporary name (created exclusively), fsync, rename: a reader sees the whole record or none. On
// failure (a full disk) nothing is left but the journal's earlier records, and OutputError names
// the record.
void write_durably(const fs::path& path, const std::string& text) {
  replace_file_atomically(path.string(), text.data(), text.size(), path.string(), path.string() + ".tmp");
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string PointJournal::dir_for(const std::string& out_path) { return journal_dir_for(out_path); }

PointJournal::PointJournal(std::string dir, std::string sweep_hash)
    : dir_(std::move(dir)), sweep_hash_(std::move(sweep_hash)) {}

bool PointJournal::exists() const { return fs::exists(dir_); }

void PointJournal::create() {
  std::error_code ec;
  if (!fs::create_directory(dir_, ec) || ec) {
    if (ec) throw output_error(dir_, ec.value(), "cannot create the sweep journal directory");
    throw OutputError(dir_, "cannot create the sweep journal directory: it exists");
  }
  try {
    write_durably(fs::path(dir_) / kHashFile, sweep_hash_ + "\n");
  } catch (...) {
    fs::remove_all(dir_, ec);  // a journal without its hash would be refused by --resume
    throw;
  }
}

std::vector<PointRecord> PointJournal::load() const {
  const fs::path hash_file = fs::path(dir_) / kHashFile;
  if (!fs::exists(hash_file))
    throw core::ConfigError(core::ConfigProblem{dir_, 0, "", "not an attnsim sweep journal"});
  std::string hash = read_all(hash_file);
  while (!hash.empty() && hash.back() == '\n') hash.pop_back();
  if (hash != sweep_hash_)
    throw core::ConfigError(core::ConfigProblem{
        dir_, 0, "", "journal belongs to a different sweep file or --set (" + hash + ", expected " + sweep_hash_ +
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

std::size_t PointJournal::size() const {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kPrefix, 0) == 0 && name.size() >= 5 && name.substr(name.size() - 4) == kSuffix) ++n;
  }
  return n;
}

void PointJournal::append(const PointRecord& p) {
  write_durably(fs::path(dir_) / (kPrefix + std::to_string(p.index) + kSuffix), serialize_point(p));
}

void PointJournal::remove() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace attnsim::io
