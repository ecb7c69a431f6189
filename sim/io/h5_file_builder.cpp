#include "sim/io/h5_file_builder.h"

#include <stdexcept>

namespace attnsim::io {

H5::StrType H5FileBuilder::string_type() {
  H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
  t.setCset(H5T_CSET_UTF8);
  return t;
}

void H5FileBuilder::set_attr(H5::H5Object& obj, const std::string& name, const std::string& value) {
  const H5::StrType t = string_type();
  H5::Attribute a = obj.createAttribute(name, t, H5::DataSpace(H5S_SCALAR));
  a.write(t, value);
}

void H5FileBuilder::set_attr(H5::H5Object& obj, const std::string& name, std::int64_t value) {
  H5::Attribute a = obj.createAttribute(name, H5::PredType::NATIVE_INT64, H5::DataSpace(H5S_SCALAR));
  a.write(H5::PredType::NATIVE_INT64, &value);
}

void H5FileBuilder::set_attr_double(H5::H5Object& obj, const std::string& name, double value) {
  H5::Attribute a = obj.createAttribute(name, H5::PredType::IEEE_F64LE, H5::DataSpace(H5S_SCALAR));
  a.write(H5::PredType::NATIVE_DOUBLE, &value);
}

std::string H5FileBuilder::read_string_attr(const H5::H5Object& obj, const std::string& name) {
  if (!obj.attrExists(name)) return {};
  H5::Attribute a = obj.openAttribute(name);
  std::string s;
  a.read(a.getStrType(), s);
  return s;
}

void H5FileBuilder::write_string(H5::Group& g, const std::string& name, const std::string& value) {
  const H5::StrType t = string_type();
  H5::DataSet d = g.createDataSet(name, t, H5::DataSpace(H5S_SCALAR));
  d.write(value, t);
}

void H5FileBuilder::write_strings(H5::Group& g, const std::string& name, const std::vector<std::string>& values) {
  const H5::StrType t = string_type();
  const hsize_t n = values.size();
  H5::DataSet d = g.createDataSet(name, t, H5::DataSpace(1, &n));
  std::vector<const char*> ptrs;
  for (const auto& s : values) ptrs.push_back(s.c_str());
  if (n) d.write(ptrs.data(), t);
}

void H5FileBuilder::write_doubles(H5::Group& g, const std::string& name, const std::vector<double>& values) {
  const hsize_t n = values.size();
  H5::DataSet d = g.createDataSet(name, H5::PredType::IEEE_F64LE, H5::DataSpace(1, &n));
  if (n) d.write(values.data(), H5::PredType::NATIVE_DOUBLE);
}

void H5FileBuilder::write_uint64_matrix(H5::Group& g, const std::string& name,
                                        const std::vector<std::uint64_t>& values, std::size_t rows,
                                        std::size_t cols) {
  if (values.size() != rows * cols) throw std::logic_error("write_uint64_matrix: shape mismatch");
  const hsize_t dims[2] = {rows, cols};
  H5::DataSet d = g.createDataSet(name, H5::PredType::STD_U64LE, H5::DataSpace(2, dims));
  if (!values.empty()) d.write(values.data(), H5::PredType::NATIVE_UINT64);
}

void H5FileBuilder::write_column(H5::Group& g, const Column& c) {
  const hsize_t n = c.cells.size();
  switch (column_type(c)) {
    case ColumnType::kInt64: {
      std::vector<std::int64_t> v;
      for (const auto& x : c.cells) v.push_back(std::get<std::int64_t>(x));
      H5::DataSet d = g.createDataSet(c.name, H5::PredType::STD_I64LE, H5::DataSpace(1, &n));
      if (n) d.write(v.data(), H5::PredType::NATIVE_INT64);
      return;
    }
    case ColumnType::kFloat64: {
      std::vector<double> v;
      for (const auto& x : c.cells)
        v.push_back(std::holds_alternative<double>(x) ? std::get<double>(x)
                                                       : static_cast<double>(std::get<std::int64_t>(x)));
      write_doubles(g, c.name, v);
      return;
    }
    case ColumnType::kBool: {
      // HDF5 enum {FALSE=0, TRUE=1} over int8: h5py reads it as numpy bool.
      H5::EnumType t(H5::PredType::NATIVE_INT8);
      std::int8_t f = 0, tr = 1;
      t.insert("FALSE", &f);
      t.insert("TRUE", &tr);
      std::vector<std::int8_t> v;
      for (const auto& x : c.cells) v.push_back(std::get<bool>(x) ? 1 : 0);
      H5::DataSet d = g.createDataSet(c.name, t, H5::DataSpace(1, &n));
      if (n) d.write(v.data(), t);
      return;
    }
    case ColumnType::kString: {
      std::vector<std::string> v;
      for (const auto& x : c.cells) v.push_back(cell_to_string(x));
      write_strings(g, c.name, v);
      return;
    }
  }
}

H5::Group H5FileBuilder::ordered_group(H5::Group& parent, const std::string& name) {
  const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  const hid_t id = H5Gcreate2(parent.getId(), name.c_str(), H5P_DEFAULT, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  if (id < 0) throw H5::GroupIException("ordered_group", "cannot create group " + name);
  H5::Group g(id);  // the C++ object adds its own reference to id
  H5Gclose(id);
  return g;
}

}  // namespace attnsim::io
