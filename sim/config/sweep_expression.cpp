#include "sim/config/sweep_expression.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace attnsim::config {

struct SweepExpression::Node {
  enum Kind { kNumber, kName, kUnary, kBinary } kind = kNumber;
  std::int64_t number = 0;
  std::string op;  // name for kName; operator otherwise
  std::unique_ptr<Node> a, b;
};

namespace {

using Node = SweepExpression::Node;

class Parser {
 public:
  Parser(const std::string& t, std::vector<std::string>& names) : t_(t), names_(names) {}

  std::unique_ptr<Node> parse() {
    auto n = parse_or();
    skip();
    if (pos_ != t_.size()) fail("unexpected '" + t_.substr(pos_, 1) + "'");
    return n;
  }

 private:
  void skip() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("in expression '" + t_ + "' at column " + std::to_string(pos_ + 1) + ": " + what);
  }
  bool word(const char* w) {
    skip();
    const std::size_t n = std::char_traits<char>::length(w);
    if (t_.compare(pos_, n, w) != 0) return false;
    if (pos_ + n < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_ + n])) || t_[pos_ + n] == '_'))
      return false;
    pos_ += n;
    return true;
  }
  bool sym(const char* s) {
    skip();
    const std::size_t n = std::char_traits<char>::length(s);
    if (t_.compare(pos_, n, s) != 0) return false;
    pos_ += n;
    return true;
  }
  static std::unique_ptr<Node> bin(std::string op, std::unique_ptr<Node> a, std::unique_ptr<Node> b) {
    auto n = std::make_unique<Node>();
    n->kind = Node::kBinary;
    n->op = std::move(op);
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }
  std::unique_ptr<Node> parse_or() {
    auto n = parse_and();
    while (word("or")) n = bin("or", std::move(n), parse_and());
    return n;
  }
  std::unique_ptr<Node> parse_and() {
    auto n = parse_not();
    while (word("and")) n = bin("and", std::move(n), parse_not());
    return n;
  }
  std::unique_ptr<Node> parse_not() {
    if (word("not")) {
      auto n = std::make_unique<Node>();
      n->kind = Node::kUnary;
      n->op = "not";
      n->a = parse_not();
      return n;
    }
    return parse_cmp();
  }
  std::unique_ptr<Node> parse_cmp() {
    auto n = parse_sum();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"})
      if (sym(op)) return bin(op, std::move(n), parse_sum());
    return n;
  }
  std::unique_ptr<Node> parse_sum() {
    auto n = parse_prod();
    for (;;) {
      if (sym("+")) n = bin("+", std::move(n), parse_prod());
      else if (sym("-")) n = bin("-", std::move(n), parse_prod());
      else return n;
    }
  }
  std::unique_ptr<Node> parse_prod() {
    auto n = parse_unary();
    for (;;) {
      if (sym("*")) n = bin("*", std::move(n), parse_unary());
      else if (sym("/")) n = bin("/", std::move(n), parse_unary());
      else if (sym("%")) n = bin("%", std::move(n), parse_unary());
      else return n;
    }
  }
  std::unique_ptr<Node> parse_unary() {
    if (sym("-")) {
      auto n = std::make_unique<Node>();
      n->kind = Node::kUnary;
      n->op = "-";
      n->a = parse_unary();
      return n;
    }
    return parse_atom();
  }
  std::unique_ptr<Node> parse_atom() {
    skip();
    if (pos_ >= t_.size()) fail("expected a number, a key name or '('");
    if (sym("(")) {
      auto n = parse_or();
      if (!sym(")")) fail("expected ')'");
      return n;
    }
    auto n = std::make_unique<Node>();
    const char c = t_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t end = pos_;
      while (end < t_.size() && std::isdigit(static_cast<unsigned char>(t_[end]))) ++end;
      try {
        n->number = std::stoll(t_.substr(pos_, end - pos_));
      } catch (const std::out_of_range&) {
        fail("number too large");
      }
      pos_ = end;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = pos_;
      while (end < t_.size() &&
             (std::isalnum(static_cast<unsigned char>(t_[end])) || t_[end] == '_' || t_[end] == '.'))
        ++end;
      const std::string name = t_.substr(pos_, end - pos_);
      pos_ = end;
      if (name == "true" || name == "false") {
        n->number = name == "true";
        return n;
      }
      if (name == "and" || name == "or" || name == "not") fail("expected an operand before '" + name + "'");
      n->kind = Node::kName;
      n->op = name;
      if (std::find(names_.begin(), names_.end(), name) == names_.end()) names_.push_back(name);
      return n;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& t_;
  std::vector<std::string>& names_;
  std::size_t pos_ = 0;
};

std::int64_t eval(const Node& n, const SweepExpression::Lookup& lookup) {
  switch (n.kind) {
    case Node::kNumber: return n.number;
    case Node::kName: {
      const auto v = lookup(n.op);
      if (!v) throw std::domain_error("'" + n.op + "' is not a known integer key");
      return *v;
    }
    case Node::kUnary: {
      const std::int64_t a = eval(*n.a, lookup);
      return n.op == "-" ? -a : static_cast<std::int64_t>(a == 0);
    }
    case Node::kBinary: break;
  }
  const std::string& op = n.op;
  if (op == "and") return eval(*n.a, lookup) != 0 && eval(*n.b, lookup) != 0;
  if (op == "or") return eval(*n.a, lookup) != 0 || eval(*n.b, lookup) != 0;
  const std::int64_t a = eval(*n.a, lookup), b = eval(*n.b, lookup);
  if (op == "+") return a + b;
  if (op == "-") return a - b;
  if (op == "*") return a * b;
  if (op == "/" || op == "%") {
    if (b == 0) throw std::domain_error("division by zero");
    return op == "/" ? a / b : a % b;
  }
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  if (op == "==") return a == b;
  return a != b;
}

}  // namespace

SweepExpression::SweepExpression(const std::string& text) : text_(text) {
  root_ = Parser(text_, names_).parse();
}
SweepExpression::~SweepExpression() = default;
SweepExpression::SweepExpression(SweepExpression&&) noexcept = default;
SweepExpression& SweepExpression::operator=(SweepExpression&&) noexcept = default;

std::int64_t SweepExpression::evaluate(const Lookup& lookup) const { return eval(*root_, lookup); }

}  // namespace attnsim::config
