#include "sim/io/h5_results_reader.h"

#include <algorithm>
#include <fstream>

#include "sim/core/errors.h"
#include "sim/io/h5_file_builder.h"

namespace attnsim::io {

namespace {

std::vector<std::string> names_in_creation_order(const H5::Group& g) {
  std::vector<std::string> names;
  const hsize_t n = g.getNumObjs();
  for (hsize_t i = 0; i < n; ++i) {
    const ssize_t len = H5Lget_name_by_idx(g.getId(), ".", H5_INDEX_CRT_ORDER, H5_ITER_INC, i, nullptr, 0,
                                           H5P_DEFAULT);
    if (len < 0) throw H5::GroupIException("names_in_creation_order", "no creation order");
    std::string s(static_cast<std::size_t>(len), '\0');
    H5Lget_name_by_idx(g.getId(), ".", H5_INDEX_CRT_ORDER, H5_ITER_INC, i, s.data(), s.size() + 1, H5P_DEFAULT);
    names.push_back(s);
  }
  return names;
}

std::string read_string_dataset(const H5::Group& g, const std::string& name) {
  H5::DataSet d = g.openDataSet(name);
  std::string s;
  d.read(s, d.getStrType());
  return s;
}

Column read_column(const H5::Group& g, const std::string& name) {
  H5::DataSet d = g.openDataSet(name);
  H5::DataSpace space = d.getSpace();
  hsize_t n = 0;
  space.getSimpleExtentDims(&n);
  Column c{name, {}};
  switch (d.getTypeClass()) {
    case H5T_INTEGER: {
      std::vector<std::int64_t> v(n);
      if (n) d.read(v.data(), H5::PredType::NATIVE_INT64);
      for (auto x : v) c.cells.emplace_back(x);
      break;
    }
    case H5T_FLOAT: {
      std::vector<double> v(n);
      if (n) d.read(v.data(), H5::PredType::NATIVE_DOUBLE);
      for (auto x : v) c.cells.emplace_back(x);
      break;
    }
    case H5T_ENUM: {
      std::vector<std::int8_t> v(n);
      if (n) d.read(v.data(), d.getEnumType());
      for (auto x : v) c.cells.emplace_back(x != 0);
      break;
    }
    case H5T_STRING: {
      std::vector<char*> v(n);
      const H5::StrType t = H5FileBuilder::string_type();
      if (n) d.read(v.data(), t);
      for (auto* x : v) c.cells.emplace_back(std::string(x ? x : ""));
      if (n) H5Dvlen_reclaim(t.getId(), space.getId(), H5P_DEFAULT, v.data());
      break;
    }
    default:
      throw H5::DataSetIException("read_column", "unsupported column type in " + name);
  }
  return c;
}

}  // namespace

ResultsFile read_results_h5(const std::string& path) {
  if (!std::ifstream(path)) throw core::ConfigError(core::ConfigProblem{path, 0, "", "cannot open file"});
  ResultsFile r;
  try {
    H5::Exception::dontPrint();
    H5::H5File f(path, H5F_ACC_RDONLY);
    H5::Group root = f.openGroup("/");
    for (int i = 0, n = root.getNumAttrs(); i < n; ++i) {
      H5::Attribute a = root.openAttribute(static_cast<unsigned>(i));
      if (a.getTypeClass() == H5T_STRING) {
        std::string s;
        a.read(a.getStrType(), s);
        r.string_attrs[a.getName()] = s;
      } else if (a.getName() == "complete") {
        std::int64_t v = 0;
        a.read(H5::PredType::NATIVE_INT64, &v);
        r.complete = v != 0;
      }
    }
    r.config_yaml = read_string_dataset(root, "config");
    H5::Group table = f.openGroup("/table");
    for (const auto& name : names_in_creation_order(table)) r.table.push_back(read_column(table, name));
    if (f.nameExists("/points")) {
      H5::Group points = f.openGroup("/points");
      for (const auto& name : names_in_creation_order(points)) {
        H5::Group pg = points.openGroup(name);
        r.points.push_back(parse_point(read_string_dataset(pg, "record")));
      }
      std::sort(r.points.begin(), r.points.end(),
                [](const PointRecord& a, const PointRecord& b) { return a.index < b.index; });
    }
  } catch (const H5::Exception& e) {
    throw core::ConfigError(core::ConfigProblem{path, 0, "", "not a readable attnsim results file: " +
                                                                 e.getDetailMsg()});
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const core::ConfigError*>(&e)) throw;
    throw core::ConfigError(core::ConfigProblem{path, 0, "", std::string("bad point record: ") + e.what()});
  }
  return r;
}

}  // namespace attnsim::io
