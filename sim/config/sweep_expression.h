// The tiny expression language of sweep constraints and derived values: 64-bit integers,
// key names, + - * / %, comparisons, and/or/not, parentheses. No strings, no floats, no calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnsim::config {

class SweepExpression {
 public:
  // Throws std::invalid_argument with a message (position and what was expected) on bad syntax.
  explicit SweepExpression(const std::string& text);
  ~SweepExpression();
  SweepExpression(SweepExpression&&) noexcept;
  SweepExpression& operator=(SweepExpression&&) noexcept;

  // Looks a key name up; nullopt = not a number (evaluation fails).
  using Lookup = std::function<std::optional<std::int64_t>(const std::string&)>;
  // Comparisons and and/or/not yield 1 or 0. Throws std::domain_error for division by zero or a
  // name `lookup` does not know.
  std::int64_t evaluate(const Lookup& lookup) const;

  const std::string& text() const { return text_; }
  const std::vector<std::string>& names() const { return names_; }  // key names it uses

  struct Node;

 private:
  std::string text_;
  std::vector<std::string> names_;
  std::unique_ptr<Node> root_;
};

}  // namespace attnsim::config
