// A streaming JSON writer: objects, arrays, strings and numbers in the order they are given.
// Numbers print exactly (integral values as integers, others as shortest round-trip); no parsing.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace attnsim::io {

class JsonWriter {
 public:
  // `indent` spaces per level; 0 writes everything on one line.
  explicit JsonWriter(std::ostream& out, int indent = 2);

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view k);  // inside an object, before each value

  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(bool b);
  void value(std::int64_t v);
  void value(std::uint64_t v);
  void value(int v) { value(static_cast<std::int64_t>(v)); }
  void value(unsigned v) { value(static_cast<std::uint64_t>(v)); }
  void value(double v);  // NaN and infinities print as null
  void null();

  // Finishes the document with a newline; every container must be closed.
  void finish();

  static std::string format_number(double v);
  static std::string quote(std::string_view s);

 private:
  void before_value();
  void newline();

  std::ostream& out_;
  int indent_;
  struct Level {
    bool is_object;
    bool empty;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace attnsim::io
