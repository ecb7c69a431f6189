// Thin helpers over the HDF5 C++ API for the results schema: string/number attributes, string
// and numeric datasets, table columns, ordered groups. Not a general HDF5 wrapper.
#pragma once

#include <H5Cpp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/io/results_table.h"

namespace attnsim::io {

class H5FileBuilder {
 public:
  static void set_attr(H5::H5Object& obj, const std::string& name, const std::string& value);
  static void set_attr(H5::H5Object& obj, const std::string& name, std::int64_t value);
  static void set_attr_double(H5::H5Object& obj, const std::string& name, double value);
  static void write_string(H5::Group& g, const std::string& name, const std::string& value);
  static void write_strings(H5::Group& g, const std::string& name, const std::vector<std::string>& values);
  static void write_doubles(H5::Group& g, const std::string& name, const std::vector<double>& values);
  static void write_uint64_matrix(H5::Group& g, const std::string& name, const std::vector<std::uint64_t>& values,
                                  std::size_t rows, std::size_t cols);
  static void write_column(H5::Group& g, const Column& c);
  // A group whose links h5py lists in creation order (not alphabetically).
  static H5::Group ordered_group(H5::Group& parent, const std::string& name);
  static H5::StrType string_type();

  static std::string read_string_attr(const H5::H5Object& obj, const std::string& name);
};

}  // namespace attnsim::io
