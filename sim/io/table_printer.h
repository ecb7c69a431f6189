// A plain-text table for people: a header row and aligned columns (numbers right-aligned).
// Fixed-width text only; no colours, no wrapping of long cells.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace attnsim::io {

class TablePrinter {
 public:
  explicit TablePrinter(std::vector<std::string> header);

  void add_row(std::vector<std::string> cells);  // missing cells print empty; extra cells are an error
  void print(std::ostream& out) const;
  std::size_t rows() const { return rows_.size(); }

  // "1,234,567" for an integer count.
  static std::string group_thousands(std::uint64_t v);
  // Integral values exactly, others with `precision` significant digits.
  static std::string format_value(double v, int precision = 6);

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace attnsim::io
