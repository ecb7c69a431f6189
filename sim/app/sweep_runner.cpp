#include "sim/app/sweep_runner.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <thread>

#include "kernels/registry.h"
#include "sim/app/run_estimate.h"
#include "sim/config/sweep_expander.h"
#include "sim/core/errors.h"
#include "sim/io/durable_write.h"
#include "sim/io/h5_results_reader.h"
#include "sim/io/h5_results_writer.h"
#include "sim/io/output_target.h"
#include "sim/io/point_journal.h"
#include "sim/app/remote_point_pool.h"

namespace attnsim::app {

namespace {

using Clock = std::chrono::steady_clock;

io::PointRecord to_record(const config::SweepPoint& p) {
  io::PointRecord r;
  r.index = p.index;
  // A key a null axis value left unset is absent from the row, as a key the point lacks.
  for (const auto& [k, v] : p.params)
    if (const auto* i = std::get_if<std::int64_t>(&v)) r.params.push_back({k, io::Cell{*i}});
    else if (const auto* d = std::get_if<double>(&v)) r.params.push_back({k, io::Cell{*d}});
    else if (const auto* b = std::get_if<bool>(&v)) r.params.push_back({k, io::Cell{*b}});
    else if (const auto* s = std::get_if<std::string>(&v)) r.params.push_back({k, io::Cell{*s}});
  r.config_yaml = p.config_yaml;
  if (!p.possible) {
    r.status = io::kStatusImpossible;
    r.reason = p.reason;
  }
  return r;
}

class Progress {
 public:
  // `costs`: the estimated cost of each point still to run, by index (order_longest_first).
  Progress(std::ostream* out, bool terminal, std::uint64_t total, std::uint64_t already,
           std::map<std::uint64_t, double> costs)
      : out_(out), terminal_(terminal), total_(total), done_(already), start_(Clock::now()), first_(already),
        costs_(std::move(costs)) {
    for (const auto& [index, cost] : costs_) cost_left_ += cost;
  }

  void tick(std::uint64_t index) {
    ++done_;
    const auto it = costs_.find(index);
    if (it != costs_.end()) {
      cost_done_ += it->second;
      cost_left_ -= it->second;
    }
    if (!out_) return;
    const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = secs > 0 ? static_cast<double>(done_ - first_) / secs : 0;
    const double eta = sweep_eta_seconds(secs, done_ - first_, total_ - done_, cost_done_, std::max(0.0, cost_left_));
    char stats[96];
    std::snprintf(stats, sizeof stats, "%llu/%llu  %.2f pt/s  ETA %.0fs", static_cast<unsigned long long>(done_),
                  static_cast<unsigned long long>(total_), rate, eta);
    if (terminal_) {
      const int width = 30;
      const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
      *out_ << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
            << std::string(static_cast<std::size_t>(width - filled), '.') << "] " << stats << std::flush;
      if (done_ == total_) *out_ << "\n";
    } else {
      const std::uint64_t step = std::max<std::uint64_t>(1, total_ / 20);
      if (done_ % step == 0 || done_ == total_) *out_ << "sweep: " << stats << "\n" << std::flush;
    }
  }

 private:
  std::ostream* out_;
  bool terminal_;
  std::uint64_t total_, done_;
  Clock::time_point start_;
  std::uint64_t first_;
  std::map<std::uint64_t, double> costs_;
  double cost_done_ = 0, cost_left_ = 0;
};

// A writer killed mid-write (SIGKILL: other signals remove it) leaves "<target>.tmp-<pid>" (or
// "...-<pid>-<n>") beside the file `out_path` replaces; remove those whose process is gone. A
// device or FIFO output has no temporaries, and its directory is never scanned.
void remove_stale_temporaries(const std::string& out_path) {
  namespace fs = std::filesystem;
  io::OutputTarget t;
  try {
    t = io::resolve_output(out_path);
  } catch (const io::OutputError&) {
    return;
  }
  if (t.kind != io::OutputTarget::Kind::kFile) return;
  const fs::path out(t.target);
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  const std::string prefix = out.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::string pid = name.substr(prefix.size());
    const auto dash = pid.find('-');
    if (dash != std::string::npos) {
      const std::string n = pid.substr(dash + 1);
      if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
      pid.resize(dash);
    }
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!e.is_regular_file(ec)) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) fs::remove(e.path(), ec);
  }
}

// Journals records on a few threads so that rank 0 of an MPI sweep never waits on fsync while
// workers wait for work: concurrent fsyncs of distinct files share the file system's commits
// (measured on ext4 here: 700 serial vs 2,400 per second with 4 threads). A record queued but not
// yet durable when rank 0 dies is simply run again by --resume.
class AsyncJournal {
 public:
  AsyncJournal(io::PointJournal& journal, unsigned threads) : journal_(journal) {
    for (unsigned t = 0; t < threads; ++t) threads_.emplace_back([this] { loop(); });
  }
  ~AsyncJournal() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void push(io::PointRecord r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(r));
    }
    cv_.notify_one();
  }
  // Waits until every pushed record is durable; rethrows the first write failure.
  void drain() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [this] { return queue_.empty() && busy_ == 0; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void loop() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      io::PointRecord r = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
      const bool failed = error_ != nullptr;
      lock.unlock();
      try {
        if (!failed) journal_.append(r);
      } catch (...) {
        std::lock_guard<std::mutex> guard(mu_);
        if (!error_) error_ = std::current_exception();
      }
      lock.lock();
      --busy_;
      if (queue_.empty() && busy_ == 0) idle_.notify_all();
    }
  }

  io::PointJournal& journal_;
  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<io::PointRecord> queue_;
  unsigned busy_ = 0;
  bool closing_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace

io::PointRecord run_sweep_point(const config::SweepPoint& p, const PointRunner& run_point) {
  io::PointRecord r = to_record(p);
  try {
    if (p.possible) r.result = run_point(p.workload, *p.device);
  } catch (const core::ConfigError& e) {
    r.status = io::kStatusImpossible;
    r.reason = e.what();
  } catch (const core::SimError& e) {
    r.status = io::kStatusError;
    r.reason = e.what();
  }
  if (r.result) r.result->wall_seconds = 0;  // host time is not part of the results
  return r;
}

double estimated_cost(const config::SweepPoint& p) {
  if (!p.possible || !p.device) return 0;
  try {
    return estimate_run(kernels::make_program(p.workload, *p.device), *p.device).events;
  } catch (const core::ConfigError&) {
    return 0;  // the run will report it
  }
}

std::map<std::uint64_t, double> order_longest_first(std::vector<const config::SweepPoint*>& todo) {
  std::vector<std::pair<double, const config::SweepPoint*>> keyed;
  keyed.reserve(todo.size());
  std::map<std::uint64_t, double> costs;
  for (const auto* p : todo) keyed.emplace_back(costs[p->index] = estimated_cost(*p), p);
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = keyed[i].second;
  return costs;
}

double sweep_eta_seconds(double secs, std::uint64_t points_done, std::uint64_t points_left, double cost_done,
                         double cost_left) {
  if (secs <= 0 || points_done == 0) return 0;
  if (cost_done > 0) return cost_left / (cost_done / secs);
  return static_cast<double>(points_left) / (static_cast<double>(points_done) / secs);
}

SweepRunner::SweepRunner(const config::SweepSpec& spec, SweepRunOptions options, PointRunner run_point)
    : spec_(spec), options_(std::move(options)), run_point_(std::move(run_point)) {}

SweepSummary SweepRunner::run() {
  RemotePointPool* const remote = options_.remote;
  std::vector<config::SweepPoint> points;
  io::Provenance prov = io::Provenance::current(options_.command_line);
  std::optional<io::PointJournal> journal;
  std::vector<io::PointRecord> records;
  // A device or FIFO output (docs/output-paths.md) receives the file once, at the end: no snapshots,
  // and nothing to read back for --resume but the journal.
  bool stream_out = false;
  try {
    stream_out = io::resolve_output(options_.out_path).kind == io::OutputTarget::Kind::kStream;
    const config::SweepExpander expander(spec_);  // ConfigError here: nothing written yet
    if (options_.shard_count == 0 || options_.shard_index >= options_.shard_count)
      throw core::ConfigError(core::ConfigProblem{"", 0, "--shard", "expected I/N with 0 <= I < N"});
    const std::string shard = std::to_string(options_.shard_index) + "/" + std::to_string(options_.shard_count);
    for (std::uint64_t i = options_.shard_index; i < expander.size(); i += options_.shard_count)
      points.push_back(expander.point(i));

    prov.sweep_text = spec_.text;
    prov.sweep_hash = io::content_hash(spec_.text);
    if (options_.shard_count > 1) prov.shard = shard;
    journal.emplace(io::PointJournal::dir_for(options_.out_path), io::content_hash(spec_.text + "\nshard " + shard));

    if (journal->exists()) {
      if (!options_.resume)
        throw core::ConfigError(core::ConfigProblem{journal->dir(), 0, "",
                                                    "an interrupted sweep left this journal; pass --resume to "
                                                    "continue it or delete it to start over"});
      records = journal->load();
    } else {
      if (options_.resume && !stream_out && std::filesystem::exists(options_.out_path)) {
        io::ResultsFile old = io::read_results_h5(options_.out_path);
        auto it = old.string_attrs.find("sweep_hash");
        auto sh = old.string_attrs.find("shard");
        if (it != old.string_attrs.end() && it->second == prov.sweep_hash &&
            (sh == old.string_attrs.end() ? shard == "0/1" : sh->second == shard))
          records = std::move(old.points);
      }
      journal->create();
      for (const auto& r : records) journal->append(r);
    }
  } catch (const core::ConfigError&) {
    if (remote) remote->announce(2);
    throw;
  } catch (...) {
    if (remote) remote->announce(3);
    throw;
  }
  if (remote) remote->announce(0);
  remove_stale_temporaries(options_.out_path);
  std::set<std::uint64_t> done;
  for (const auto& r : records) done.insert(r.index);

  std::vector<const config::SweepPoint*> todo;
  for (const auto& p : points)
    if (!done.count(p.index)) todo.push_back(&p);
  std::map<std::uint64_t, double> costs = order_longest_first(todo);

  SweepSummary summary;
  summary.total = points.size();
  summary.resumed = points.size() - todo.size();

  std::mutex mu;
  std::condition_variable cv;
  std::deque<io::PointRecord> finished;
  std::exception_ptr failure;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};

  // After a SIGINT nobody starts a new point; the points in flight finish.
  auto interrupted = [&]() { return options_.interrupt && options_.interrupt->load(); };
  auto worker = [&]() {
    for (;;) {
      if (stop.load() || interrupted()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= todo.size()) return;
      io::PointRecord r;
      try {
        r = run_sweep_point(*todo[i], run_point_);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
        stop = true;
        cv.notify_all();
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      finished.push_back(std::move(r));
      cv.notify_all();
    }
  };
  // Remote workers draw from the same counter as the local threads: whoever is free takes the next.
  // A batch never exceeds half of an even share of what remains (guided self-scheduling), so a
  // batch grown on cheap points cannot leave one rank with a run of costly ones at the end.
  const std::size_t takers = options_.jobs + (remote ? remote->workers() : 0);
  const RemotePointPool::Take take = [&](std::size_t max) {
    const std::size_t left = todo.size() - std::min(todo.size(), next.load());
    max = std::min(max, std::max<std::size_t>(1, left / (2 * std::max<std::size_t>(1, takers))));
    std::vector<std::uint64_t> out;
    while (out.size() < max && !stop.load() && !interrupted()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= todo.size()) break;
      out.push_back(todo[i]->index);
    }
    return out;
  };

  const unsigned jobs = std::max(1u, std::min<unsigned>(options_.jobs, static_cast<unsigned>(std::max<std::size_t>(1, todo.size()))));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < jobs; ++t) threads.emplace_back(worker);

  Progress progress(options_.progress, options_.progress_is_terminal, points.size(), summary.resumed,
                    std::move(costs));
  auto last_snapshot = Clock::now() - std::chrono::hours(1);  // first finished point: readable file at once
  double snapshot_gap = options_.snapshot_seconds;
  std::size_t snapshot_rows = 0;  // a snapshot is written only when it would hold more points
  auto sorted = [&records]() {
    std::sort(records.begin(), records.end(),
              [](const io::PointRecord& a, const io::PointRecord& b) { return a.index < b.index; });
  };
  std::size_t received = 0;
  std::optional<AsyncJournal> async_journal;
  if (remote) async_journal.emplace(*journal, 4);
  const RemotePointPool::Done accept = [&](io::PointRecord&& r) {
    if (async_journal) async_journal->push(r);  // durable soon; rank 0 keeps serving meanwhile
    else journal->append(r);  // durable before it counts as done
    const std::uint64_t index = r.index;
    records.push_back(std::move(r));
    ++received;
    progress.tick(index);
  };
  auto drain_local = [&]() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mu);
      if (finished.empty()) return;
      io::PointRecord r = std::move(finished.front());
      finished.pop_front();
      lock.unlock();
      accept(std::move(r));
    }
  };
  const auto wait = remote ? std::chrono::milliseconds(1) : std::chrono::milliseconds(100);
  try {
    while (received < todo.size()) {
      if (interrupted()) break;
      const bool served = remote && remote->serve(take, accept);
      if (remote && !remote->failure().empty()) break;
      {
        std::unique_lock<std::mutex> lock(mu);
        if (!served) cv.wait_for(lock, wait, [&] { return !finished.empty() || failure; });
        if (finished.empty() && failure) break;
      }
      drain_local();
      if (!stream_out && std::chrono::duration<double>(Clock::now() - last_snapshot).count() >= snapshot_gap &&
          received < todo.size() && records.size() > snapshot_rows) {
        const auto t0 = Clock::now();
        sorted();
        io::write_results_h5(options_.out_path, records, prov, spec_.text, false);
        snapshot_rows = records.size();
        last_snapshot = Clock::now();
        // A snapshot rewrites the whole file: keep rewriting it under ~10 % of this thread's time.
        snapshot_gap = std::max(options_.snapshot_seconds, 9 * std::chrono::duration<double>(last_snapshot - t0).count());
      }
    }
    // Done, interrupted or failed: no new points; those in flight finish and are journaled.
    stop = true;
    for (auto& t : threads) t.join();
    threads.clear();
    drain_local();
    const bool failed = failure || (remote && !remote->failure().empty());
    if (remote) remote->stop(failed ? 3 : received < todo.size() ? 130 : 0, accept);
    if (async_journal) async_journal->drain();
  } catch (...) {
    stop = true;
    for (auto& t : threads) t.join();
    if (remote) remote->stop(3, [](io::PointRecord&&) {});
    throw;
  }
  if (failure) std::rethrow_exception(failure);
  if (remote && !remote->failure().empty()) throw core::SimError(remote->failure());

  sorted();
  if (received < todo.size()) {
    io::write_results_h5(options_.out_path, records, prov, spec_.text, false);
    throw SweepInterrupted("interrupted after " + std::to_string(records.size()) + " of " +
                           std::to_string(points.size()) + " points; the journal " + journal->dir() +
                           " keeps them: rerun with --resume to finish");
  }
  io::write_results_h5(options_.out_path, records, prov, spec_.text, true);
  journal->remove();
  for (const auto& r : records) {
    if (r.status == io::kStatusOk) ++summary.ok;
    else if (r.status == io::kStatusImpossible) ++summary.impossible;
    else ++summary.error;
  }
  return summary;
}

}  // namespace attnsim::app
