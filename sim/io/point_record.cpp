#include "sim/io/point_record.h"

#include <charconv>
#include <sstream>
#include <stdexcept>

#include "sim/core/derived_metrics.h"

namespace attnsim::io {

namespace {

// v2 adds each kernel's occupancy limiter after its series; v1 records are still read (the
// limiter then follows from the kernel's launch__occupancy_limit_* metrics).
constexpr const char* kMagic = "attnsim-point-v2";
constexpr const char* kMagicV1 = "attnsim-point-v1";

class Encoder {
 public:
  void str(std::string_view s) {
    out_ << s.size() << ':';
    out_.write(s.data(), static_cast<std::streamsize>(s.size()));
    out_ << '\n';
  }
  void u(std::uint64_t v) { out_ << v << '\n'; }
  void i(std::int64_t v) { out_ << v << '\n'; }
  void d(double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.write(buf, r.ptr - buf);
    out_ << '\n';
  }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

class Decoder {
 public:
  explicit Decoder(const std::string& text) : t_(text) {}
  std::string str() {
    const std::size_t colon = t_.find(':', pos_);
    if (colon == std::string::npos) fail();
    const std::uint64_t n = parse_u(t_.substr(pos_, colon - pos_));
    if (colon + 1 + n + 1 > t_.size() || t_[colon + 1 + n] != '\n') fail();
    std::string s = t_.substr(colon + 1, n);
    pos_ = colon + 1 + n + 1;
    return s;
  }
  std::uint64_t u() { return parse_u(line()); }
  std::int64_t i() {
    const std::string l = line();
    std::int64_t v = 0;
    auto r = std::from_chars(l.data(), l.data() + l.size(), v);
    if (r.ec != std::errc() || r.ptr != l.data() + l.size()) fail();
    return v;
  }
  double d() {
    const std::string l = line();
    double v = 0;
    auto r = std::from_chars(l.data(), l.data() + l.size(), v);
    if (r.ec != std::errc() || r.ptr != l.data() + l.size()) fail();
    return v;
  }
  bool at_end() const { return pos_ == t_.size(); }
  [[noreturn]] void fail() const {
    throw std::runtime_error("malformed point record at byte " + std::to_string(pos_));
  }

 private:
  std::string line() {
    const std::size_t nl = t_.find('\n', pos_);
    if (nl == std::string::npos) fail();
    std::string l = t_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return l;
  }
  std::uint64_t parse_u(const std::string& l) const {
    std::uint64_t v = 0;
    auto r = std::from_chars(l.data(), l.data() + l.size(), v);
    if (l.empty() || r.ec != std::errc() || r.ptr != l.data() + l.size()) fail();
    return v;
  }
  const std::string& t_;
  std::size_t pos_ = 0;
};

void put_metrics(Encoder& e, const core::Metrics& m) {
  e.u(m.size());
  for (const auto& x : m) {
    e.str(x.name);
    e.d(x.value);
  }
}

core::Metrics get_metrics(Decoder& d) {
  core::Metrics m(d.u());
  for (auto& x : m) {
    x.name = d.str();
    x.value = d.d();
  }
  return m;
}

void put_traffic(Encoder& e, const core::LevelTraffic& t) {
  for (const core::TensorTraffic* level : {&t.dram, &t.lts, &t.l1, &t.smem})
    for (const auto& b : level->by_tensor) {
      e.u(b.read);
      e.u(b.write);
    }
}

core::LevelTraffic get_traffic(Decoder& d) {
  core::LevelTraffic t;
  for (core::TensorTraffic* level : {&t.dram, &t.lts, &t.l1, &t.smem})
    for (auto& b : level->by_tensor) {
      b.read = d.u();
      b.write = d.u();
    }
  return t;
}

}  // namespace

std::string serialize_point(const PointRecord& p) {
  Encoder e;
  e.str(kMagic);
  e.u(p.index);
  e.str(p.status);
  e.str(p.reason);
  e.u(p.params.size());
  for (const auto& f : p.params) {
    e.str(f.name);
    e.u(f.value.index());
    if (const auto* i = std::get_if<std::int64_t>(&f.value)) e.i(*i);
    else if (const auto* x = std::get_if<double>(&f.value)) e.d(*x);
    else if (const auto* b = std::get_if<bool>(&f.value)) e.u(*b ? 1 : 0);
    else e.str(std::get<std::string>(f.value));
  }
  e.str(p.config_yaml);
  e.u(p.result ? 1 : 0);
  if (p.result) {
    const core::RunResult& r = *p.result;
    e.str(r.device_name);
    e.u(r.kernels.size());
    for (const auto& k : r.kernels) {
      e.str(k.name);
      put_metrics(e, k.metrics);
      put_traffic(e, k.tensors);
      e.d(k.series.period_ns);
      e.u(k.series.names.size());
      for (std::size_t c = 0; c < k.series.names.size(); ++c) {
        e.str(k.series.names[c]);
        const auto& col = c < k.series.columns.size() ? k.series.columns[c] : std::vector<double>{};
        e.u(col.size());
        for (double v : col) e.d(v);
      }
      e.str(k.occupancy_limiter);
    }
    put_metrics(e, r.metrics);
    put_traffic(e, r.tensors);
    // 0: no functional mode; 1: max_rel_error; 2: max_rel_error and rmse.
    e.u(!r.functional_max_rel_error ? 0 : r.functional_rmse ? 2 : 1);
    if (r.functional_max_rel_error) e.d(*r.functional_max_rel_error);
    if (r.functional_max_rel_error && r.functional_rmse) e.d(*r.functional_rmse);
    e.d(r.wall_seconds);
  }
  e.str("end");
  return e.text();
}

PointRecord parse_point(const std::string& text) {
  Decoder d(text);
  const std::string magic = d.str();
  if (magic != kMagic && magic != kMagicV1) d.fail();
  const bool v1 = magic == kMagicV1;
  PointRecord p;
  p.index = d.u();
  p.status = d.str();
  p.reason = d.str();
  p.params.resize(d.u());
  for (auto& f : p.params) {
    f.name = d.str();
    switch (d.u()) {
      case 0: f.value = d.i(); break;
      case 1: f.value = d.d(); break;
      case 2: f.value = d.u() != 0; break;
      case 3: f.value = d.str(); break;
      default: d.fail();
    }
  }
  p.config_yaml = d.str();
  if (d.u()) {
    core::RunResult r;
    r.device_name = d.str();
    r.kernels.resize(d.u());
    for (auto& k : r.kernels) {
      k.name = d.str();
      k.metrics = get_metrics(d);
      k.tensors = get_traffic(d);
      k.series.period_ns = d.d();
      const std::uint64_t ncol = d.u();
      for (std::uint64_t c = 0; c < ncol; ++c) {
        k.series.names.push_back(d.str());
        std::vector<double> col(d.u());
        for (auto& v : col) v = d.d();
        k.series.columns.push_back(std::move(col));
      }
      k.occupancy_limiter = v1 ? core::occupancy_limiter_of(k.metrics) : d.str();
    }
    r.metrics = get_metrics(d);
    r.tensors = get_traffic(d);
    const std::uint64_t functional = d.u();
    if (functional > 2) d.fail();
    if (functional >= 1) r.functional_max_rel_error = d.d();
    if (functional == 2) r.functional_rmse = d.d();
    r.wall_seconds = d.d();
    p.result = std::move(r);
  }
  if (d.str() != "end" || !d.at_end()) d.fail();
  return p;
}

}  // namespace attnsim::io
