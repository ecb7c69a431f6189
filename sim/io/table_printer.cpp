#include "sim/io/table_printer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace attnsim::io {

TablePrinter::TablePrinter(std::vector<std::string> header) : header_(std::move(header)) {}

void TablePrinter::add_row(std::vector<std::string> cells) {
  if (cells.size() > header_.size()) throw std::invalid_argument("TablePrinter: more cells than columns");
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

namespace {
bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  const char c = s[0];
  return std::isdigit(static_cast<unsigned char>(c)) || ((c == '-' || c == '+' || c == '.') && s.size() > 1);
}
}  // namespace

void TablePrinter::print(std::ostream& out) const {
  std::vector<std::size_t> width(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) {
    width[c] = header_[c].size();
    for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  auto emit = [&](const std::vector<std::string>& cells, bool is_header) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string& s = cells[c];
      const std::size_t pad = width[c] - s.size();
      const bool right = !is_header && looks_numeric(s);
      if (c) line += "  ";
      if (right) line += std::string(pad, ' ') + s;
      else line += s + (c + 1 < cells.size() ? std::string(pad, ' ') : "");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  emit(header_, true);
  std::vector<std::string> rule;
  for (auto w : width) rule.push_back(std::string(w, '-'));
  emit(rule, true);
  for (const auto& r : rows_) emit(r, false);
}

std::string TablePrinter::group_thousands(std::uint64_t v) {
  std::string digits = std::to_string(v);
  std::string r;
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i && (n - i) % 3 == 0) r += ',';
    r += digits[i];
  }
  return r;
}

std::string TablePrinter::format_value(double v, int precision) {
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    std::string r = group_thousands(static_cast<std::uint64_t>(std::fabs(v)));
    if (v < 0) r.insert(r.begin(), '-');
    return r;
  }
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

}  // namespace attnsim::io
