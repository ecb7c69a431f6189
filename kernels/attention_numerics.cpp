#include "kernels/attention_numerics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnsim::kernels {

namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

void check_shapes(std::size_t q_len, const Matrix& k, const Matrix& v) {
  if (k.rows == 0) throw std::invalid_argument("attention: K has no rows");
  if (k.cols != q_len) {
    throw std::invalid_argument("attention: q has " + std::to_string(q_len) + " values but K has " +
                                std::to_string(k.cols) + " columns");
  }
  if (v.rows != k.rows) {
    throw std::invalid_argument("attention: K has " + std::to_string(k.rows) + " rows but V has " +
                                std::to_string(v.rows));
  }
}

void check_block(std::int64_t block) {
  if (block < 1) {
    throw std::invalid_argument("online softmax: block must be >= 1, got " + std::to_string(block));
  }
}

Vector rounded(Vector x, Precision p) {
  for (double& e : x) e = round_to(e, p);
  return x;
}

Matrix rounded(Matrix x, Precision p) {
  for (double& e : x.values) e = round_to(e, p);
  return x;
}

// The attention kernels proper, on inputs already in storage precision.
Vector standard_on_stored(const Vector& q, const Matrix& k, const Matrix& v, Precision p) {
  const std::size_t n = k.rows;
  Vector s(n, 0.0);  // the materialised score vector (one row of S)
  for (std::size_t j = 0; j < n; ++j) {
    double dot = 0.0;
    for (std::size_t c = 0; c < k.cols; ++c) dot += q[c] * k(j, c);
    s[j] = round_to(dot, p);
  }
  const double m = *std::max_element(s.begin(), s.end());
  double l = 0.0;
  for (double sj : s) l += std::exp(sj - m);
  Vector o(v.cols, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    const double pj = round_to(std::exp(s[j] - m) / l, p);  // the materialised P
    for (std::size_t c = 0; c < v.cols; ++c) o[c] += pj * v(j, c);
  }
  return o;
}

Vector online_on_stored(const Vector& q, const Matrix& k, const Matrix& v, std::size_t block,
                        Precision p) {
  const std::size_t n = k.rows;
  double m = kMinusInf;
  double l = 0.0;
  Vector acc(v.cols, 0.0);
  Vector s;
  for (std::size_t start = 0; start < n; start += block) {
    const std::size_t end = std::min(n, start + block);
    s.assign(end - start, 0.0);
    double m_block = kMinusInf;
    for (std::size_t j = start; j < end; ++j) {
      double dot = 0.0;
      for (std::size_t c = 0; c < k.cols; ++c) dot += q[c] * k(j, c);
      s[j - start] = dot;
      m_block = std::max(m_block, dot);
    }
    const double m_new = std::max(m, m_block);
    if (m_new > m) {
      const double rescale = std::exp(m - m_new);  // 0 for the first block (m = -inf)
      l *= rescale;
      for (double& a : acc) a *= rescale;
      m = m_new;
    }
    for (std::size_t j = start; j < end; ++j) {
      const double e = std::exp(s[j - start] - m);
      l += e;
      const double pj = round_to(e, p);  // P tile cast to the storage type for P·V
      for (std::size_t c = 0; c < v.cols; ++c) acc[c] += pj * v(j, c);
    }
  }
  for (double& a : acc) a /= l;
  return acc;
}

}  // namespace

Vector Matrix::row(std::size_t r) const {
  return Vector(values.begin() + static_cast<std::ptrdiff_t>(r * cols),
                values.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols));
}

Vector standard_attention(const Vector& q, const Matrix& k, const Matrix& v, Precision storage) {
  check_shapes(q.size(), k, v);
  return standard_on_stored(rounded(q, storage), rounded(k, storage), rounded(v, storage), storage);
}

Vector online_attention(const Vector& q, const Matrix& k, const Matrix& v, std::int64_t block,
                        Precision storage) {
  check_block(block);
  check_shapes(q.size(), k, v);
  return online_on_stored(rounded(q, storage), rounded(k, storage), rounded(v, storage),
                          static_cast<std::size_t>(block), storage);
}

Matrix standard_attention(const Matrix& q, const Matrix& k, const Matrix& v, Precision storage) {
  check_shapes(q.cols, k, v);
  const Matrix ks = rounded(k, storage);
  const Matrix vs = rounded(v, storage);
  Matrix o(q.rows, v.cols);
  for (std::size_t r = 0; r < q.rows; ++r) {
    const Vector orow = standard_on_stored(rounded(q.row(r), storage), ks, vs, storage);
    std::copy(orow.begin(), orow.end(), o.values.begin() + static_cast<std::ptrdiff_t>(r * o.cols));
  }
  return o;
}

Matrix online_attention(const Matrix& q, const Matrix& k, const Matrix& v, std::int64_t block,
                        Precision storage) {
  check_block(block);
  check_shapes(q.cols, k, v);
  const Matrix ks = rounded(k, storage);
  const Matrix vs = rounded(v, storage);
  Matrix o(q.rows, v.cols);
  for (std::size_t r = 0; r < q.rows; ++r) {
    const Vector orow = online_on_stored(rounded(q.row(r), storage), ks, vs,
                                         static_cast<std::size_t>(block), storage);
    std::copy(orow.begin(), orow.end(), o.values.begin() + static_cast<std::ptrdiff_t>(r * o.cols));
  }
  return o;
}

Vector softmax(const Vector& scores) {
  if (scores.empty()) throw std::invalid_argument("softmax: no scores");
  const double m = *std::max_element(scores.begin(), scores.end());
  Vector p(scores.size());
  double l = 0.0;
  for (std::size_t j = 0; j < scores.size(); ++j) {
    p[j] = std::exp(scores[j] - m);
    l += p[j];
  }
  for (double& e : p) e /= l;
  return p;
}

SoftmaxTrace online_softmax_trace(const Vector& scores, std::int64_t block) {
  check_block(block);
  if (scores.empty()) throw std::invalid_argument("online softmax: no scores");
  SoftmaxTrace trace;
  trace.block = block;
  const auto b = static_cast<std::size_t>(block);
  double m = kMinusInf;
  double l = 0.0;
  for (std::size_t start = 0; start < scores.size(); start += b) {
    const std::size_t end = std::min(scores.size(), start + b);
    SoftmaxTraceBlock step;
    step.index = trace.blocks.size() + 1;
    step.scores.assign(scores.begin() + static_cast<std::ptrdiff_t>(start),
                       scores.begin() + static_cast<std::ptrdiff_t>(end));
    step.m_old = m;
    const double m_new = std::max(m, *std::max_element(step.scores.begin(), step.scores.end()));
    step.max_grew = m_new > m;
    step.rescale = step.max_grew ? std::exp(m - m_new) : 1.0;
    l *= step.rescale;
    m = m_new;
    for (double s : step.scores) l += std::exp(s - m);
    step.m = m;
    step.l = l;
    trace.blocks.push_back(std::move(step));
  }
  trace.softmax.resize(scores.size());
  for (std::size_t j = 0; j < scores.size(); ++j) trace.softmax[j] = std::exp(scores[j] - m) / l;
  trace.direct_softmax = softmax(scores);
  for (std::size_t j = 0; j < scores.size(); ++j) {
    trace.max_abs_difference =
        std::max(trace.max_abs_difference, std::fabs(trace.softmax[j] - trace.direct_softmax[j]));
  }
  return trace;
}

}  // namespace attnsim::kernels
