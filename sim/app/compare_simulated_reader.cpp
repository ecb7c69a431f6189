#include "sim/app/compare_simulated_reader.h"

#include <H5Cpp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "sim/core/errors.h"

namespace attnsim::app {

namespace {

struct MetricRow {
  char* name;
  double value;
};

core::ConfigError file_error(const std::string& path, const std::string& what) {
  return core::ConfigError(core::ConfigProblem{path, 0, "", what});
}

std::optional<std::uint64_t> leading_index(const std::string& s, std::size_t* rest = nullptr) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data()) return std::nullopt;
  if (rest) *rest = static_cast<std::size_t>(ptr - s.data());
  return v;
}

std::vector<std::string> child_names(const H5::Group& g) {
  std::vector<std::string> names;
  for (hsize_t i = 0; i < g.getNumObjs(); ++i) names.push_back(g.getObjnameByIdx(i));
  return names;
}

std::string string_attr(const H5::H5Object& obj, const std::string& name) {
  if (!obj.attrExists(name)) return {};
  H5::Attribute a = obj.openAttribute(name);
  if (a.getTypeClass() != H5T_STRING) return {};
  std::string s;
  a.read(a.getStrType(), s);
  return s;
}

std::string scalar_string(const H5::Group& g, const std::string& name) {
  H5::DataSet d = g.openDataSet(name);
  std::string s;
  d.read(s, d.getStrType());
  return s;
}

std::map<std::string, double> read_metrics(const H5::Group& kernel_group) {
  H5::DataSet d = kernel_group.openDataSet("metrics");
  H5::DataSpace space = d.getSpace();
  hsize_t n = 0;
  if (space.getSimpleExtentNdims() == 1) space.getSimpleExtentDims(&n);
  H5::StrType str(H5::PredType::C_S1, H5T_VARIABLE);
  H5::CompType t(sizeof(MetricRow));
  t.insertMember("name", HOFFSET(MetricRow, name), str);
  t.insertMember("value", HOFFSET(MetricRow, value), H5::PredType::NATIVE_DOUBLE);
  std::vector<MetricRow> rows(n);
  std::map<std::string, double> metrics;
  if (n == 0) return metrics;
  d.read(rows.data(), t);
  for (const auto& r : rows) metrics[r.name ? r.name : ""] = r.value;
  H5Dvlen_reclaim(t.getId(), space.getId(), H5P_DEFAULT, rows.data());
  return metrics;
}

void add_scalars(const YAML::Node& map, std::map<std::string, std::string>& out) {
  for (const auto& kv : map) {
    if (kv.second.IsScalar()) out[kv.first.as<std::string>()] = kv.second.as<std::string>();
  }
}

}  // namespace

std::string SimulatedPoint::value(const std::string& key) const {
  auto it = config.find(key);
  return it == config.end() ? std::string() : it->second;
}

std::optional<std::uint64_t> SimulatedPoint::count(const std::string& key) const {
  const std::string v = value(key);
  std::size_t rest = 0;
  auto n = leading_index(v, &rest);
  if (!n || rest != v.size()) return std::nullopt;
  return n;
}

std::map<std::string, std::string> CompareSimulatedReader::parse_config(const std::string& yaml_text) {
  std::map<std::string, std::string> out;
  const YAML::Node root = YAML::Load(yaml_text);
  if (!root.IsMap()) return out;
  add_scalars(root, out);
  if (root["workload"] && root["workload"].IsMap()) add_scalars(root["workload"], out);
  const YAML::Node device = root["device"];
  if (device && device.IsMap() && device["name"] && device["name"].IsScalar())
    out["device"] = device["name"].as<std::string>();
  return out;
}

std::vector<SimulatedPoint> CompareSimulatedReader::read(const std::string& path) {
  if (!std::ifstream(path)) throw file_error(path, "cannot open file");
  std::vector<SimulatedPoint> points;
  std::string where;
  try {
    H5::Exception::dontPrint();
    if (!H5::H5File::isHdf5(path)) throw file_error(path, "not an HDF5 file; expected the --out of attnsim run or sweep");
    H5::H5File f(path, H5F_ACC_RDONLY);
    if (!f.nameExists("points"))
      throw file_error(path, "no /points group; expected the --out of attnsim run or sweep");
    H5::Group pg = f.openGroup("points");
    for (const auto& pname : child_names(pg)) {
      where = "/points/" + pname;
      std::size_t rest = 0;
      auto index = leading_index(pname, &rest);
      if (!index || rest != pname.size()) continue;
      H5::Group g = pg.openGroup(pname);
      const std::string status = string_attr(g, "status");
      if (!status.empty() && status != "ok") continue;
      if (!g.nameExists("kernels")) continue;
      SimulatedPoint p;
      p.index = *index;
      p.config = parse_config(scalar_string(g, "config"));
      H5::Group kg = g.openGroup("kernels");
      for (const auto& kname : child_names(kg)) {
        where = "/points/" + pname + "/kernels/" + kname;
        auto k = leading_index(kname, &rest);
        if (!k) throw file_error(path, where + ": kernel group name does not start with its index");
        H5::Group kernel = kg.openGroup(kname);
        SimulatedKernel sk;
        sk.index = *k;
        sk.name = string_attr(kernel, "name");
        if (sk.name.empty()) sk.name = kname.substr(std::min(rest + 1, kname.size()));
        sk.metrics = read_metrics(kernel);
        p.kernels.push_back(std::move(sk));
      }
      std::sort(p.kernels.begin(), p.kernels.end(),
                [](const SimulatedKernel& a, const SimulatedKernel& b) { return a.index < b.index; });
      points.push_back(std::move(p));
    }
  } catch (const H5::Exception& e) {
    throw file_error(path, (where.empty() ? "" : where + ": ") + "cannot read: " + e.getDetailMsg());
  } catch (const YAML::Exception& e) {
    throw file_error(path, where + "/config: not YAML: " + e.what());
  }
  std::sort(points.begin(), points.end(),
            [](const SimulatedPoint& a, const SimulatedPoint& b) { return a.index < b.index; });
  return points;
}

}  // namespace attnsim::app
