#include "sim/io/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace attnsim::io {

JsonWriter::JsonWriter(std::ostream& out, int indent) : out_(out), indent_(indent) {}

void JsonWriter::newline() {
  if (indent_ <= 0) return;
  out_ << '\n';
  for (std::size_t i = 0; i < stack_.size() * static_cast<std::size_t>(indent_); ++i) out_ << ' ';
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  if (stack_.back().is_object) throw std::logic_error("JsonWriter: value in an object needs a key");
  if (!stack_.back().empty) out_ << ',';
  stack_.back().empty = false;
  newline();
}

void JsonWriter::key(std::string_view k) {
  if (stack_.empty() || !stack_.back().is_object || after_key_)
    throw std::logic_error("JsonWriter: key outside an object");
  if (!stack_.back().empty) out_ << ',';
  stack_.back().empty = false;
  newline();
  out_ << quote(k) << (indent_ > 0 ? ": " : ":");
  after_key_ = true;
}

void JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  stack_.push_back({true, true});
}

void JsonWriter::begin_array() {
  before_value();
  out_ << '[';
  stack_.push_back({false, true});
}

void JsonWriter::end_object() {
  if (stack_.empty() || !stack_.back().is_object || after_key_)
    throw std::logic_error("JsonWriter: unbalanced end_object");
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  out_ << '}';
}

void JsonWriter::end_array() {
  if (stack_.empty() || stack_.back().is_object) throw std::logic_error("JsonWriter: unbalanced end_array");
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  out_ << ']';
}

void JsonWriter::value(std::string_view s) {
  before_value();
  out_ << quote(s);
}

void JsonWriter::value(bool b) {
  before_value();
  out_ << (b ? "true" : "false");
}

void JsonWriter::value(std::int64_t v) {
  before_value();
  out_ << v;
}

void JsonWriter::value(std::uint64_t v) {
  before_value();
  out_ << v;
}

void JsonWriter::value(double v) {
  before_value();
  out_ << format_number(v);
}

void JsonWriter::null() {
  before_value();
  out_ << "null";
}

void JsonWriter::finish() {
  if (!stack_.empty() || after_key_) throw std::logic_error("JsonWriter: unclosed container");
  out_ << '\n';
}

std::string JsonWriter::format_number(double v) {
  if (!std::isfinite(v)) return "null";
  // Integral values below 2^53 are exact in a double: print them without a fraction.
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(v));
    return std::string(buf, r.ptr);
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest representation that round-trips
  return std::string(buf, r.ptr);
}

std::string JsonWriter::quote(std::string_view s) {
  std::string r = "\"";
  for (char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\r': r += "\\r"; break;
      case '\t': r += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          r += buf;
        } else {
          r += c;
        }
    }
  }
  r += '"';
  return r;
}

}  // namespace attnsim::io
