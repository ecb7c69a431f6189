// attnsim._core: the pybind11 binding of the C++ library the attnsim CLI runs (no second implementation).
//
// Thin by design: `run` is `attnsim run --json` (same loaders, run_workload, write_run_json), `sweep`
// drives the same SweepRunner into an HDF5 file, and `cli` runs any subcommand in-process. The
// pure-Python package (python/attnsim/__init__.py) turns the results into dicts and DataFrames.
// Simulation runs on a worker thread with the GIL released; the calling thread wakes every 50 ms
// to write the progress text the worker produced to Python's sys.stderr (so a notebook shows it
// in the cell) and to poll PyErr_CheckSignals, so Ctrl-C stops a run or a command (at the
// engine's next progress report or functional mode's next row) or a sweep (points in flight
// finish and are journaled), then raises KeyboardInterrupt.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <boost/program_options/errors.hpp>
#include <chrono>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "sim/app/command_context.h"
#include "sim/app/commands.h"
#include "sim/app/output_path.h"
#include "sim/app/run_pipeline.h"
#include "sim/app/run_progress.h"
#include "sim/app/sweep_plan.h"
#include "sim/app/sweep_runner.h"
#include "sim/config/config.h"
#include "sim/config/sweep_expander.h"
#include "sim/config/sweep_loader.h"
#include "sim/config/yaml_reader.h"
#include "sim/core/derived_metrics.h"
#include "sim/core/errors.h"
#include "sim/io/h5_results_writer.h"
#include "sim/io/run_json.h"
#include "sim/io/workload_fields.h"

namespace py = pybind11;
using namespace attnsim;

namespace {

// An output stream the worker threads write progress to; the Python thread takes the text and
// writes it to sys.stderr (worker threads never touch Python objects).
class ProgressPipe {
 public:
  std::ostream& stream() { return stream_; }
  std::string take() {
    std::lock_guard<std::mutex> lock(buffer_.mutex);
    std::string text;
    text.swap(buffer_.text);
    return text;
  }

 private:
  struct Buffer : std::streambuf {
    std::mutex mutex;
    std::string text;
    int_type overflow(int_type c) override {
      if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
      std::lock_guard<std::mutex> lock(mutex);
      text.push_back(traits_type::to_char_type(c));
      return c;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      std::lock_guard<std::mutex> lock(mutex);
      text.append(s, static_cast<std::size_t>(n));
      return n;
    }
  };
  Buffer buffer_;
  std::ostream stream_{&buffer_};
};

// sys.stderr.write(text) and flush() (nothing when sys.stderr is None). Needs the GIL.
void write_to_python_stderr(const std::string& text) {
  py::object err = py::module_::import("sys").attr("stderr");
  if (err.is_none()) return;
  err.attr("write")(py::str(text));
  if (py::hasattr(err, "flush")) err.attr("flush")();
}

// Runs body(stop) on a worker thread with the GIL released. The calling (Python) thread wakes
// every 50 ms to write what the body wrote to `pipe` (if any) to sys.stderr and to run Python's
// signal handlers; a KeyboardInterrupt (or any exception they raise) sets `stop`, waits for the
// body to wind down, and is then re-raised. Otherwise the body's own result or exception is
// returned. A sys.stderr that fails to write is left alone from then on (progress is cosmetic).
template <typename R, typename F>
R interruptible(F&& body, ProgressPipe* pipe = nullptr) {
  std::atomic<bool> stop{false};
  std::future<R> done = std::async(std::launch::async, [&]() -> R { return body(stop); });
  std::optional<py::error_already_set> python_error;
  auto fail = [&](py::error_already_set&& e) {
    if (python_error) return;
    python_error.emplace(std::move(e));
    stop.store(true);
  };
  auto flush_progress = [&]() {
    if (!pipe) return;
    const std::string text = pipe->take();
    if (text.empty()) return;
    try {
      write_to_python_stderr(text);
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyboardInterrupt)) fail(std::move(e));
      else pipe = nullptr;
    }
  };
  for (;;) {
    bool ready;
    {
      py::gil_scoped_release release;
      ready = done.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready;
    }
    flush_progress();
    if (ready) break;
    if (!python_error && PyErr_CheckSignals() != 0) fail(py::error_already_set());  // fetches the KeyboardInterrupt
  }
  if (python_error) {
    try {
      done.get();
    } catch (...) {  // the body's app::Interrupted / SweepInterrupted: the Python error wins
    }
    throw std::move(*python_error);
  }
  return done.get();
}

std::vector<config::Override> split(const std::vector<std::string>& sets, std::vector<config::Override>& device) {
  std::vector<config::Override> workload;
  config::split_overrides(config::parse_overrides(sets), workload, device);
  return workload;
}

py::dict fields_dict(const io::Fields& fields) {
  py::dict d;
  for (const auto& f : fields) d[py::str(f.name)] = py::cast(f.value);
  return d;
}

py::dict series_dict(const core::TimeSeries& s) {
  py::dict d;
  for (std::size_t c = 0; c < s.names.size(); ++c)
    d[py::str(s.names[c])] = c < s.columns.size() ? py::cast(s.columns[c]) : py::cast(std::vector<double>{});
  return d;
}

// `attnsim run --device DEV (--kernel K | --workload FILE) --set ... --json`, as cmd_run does it,
// progress as cmd_run prints it (a run over 1 s on a `terminal`, over 10 s otherwise) to sys.stderr.
// Returns (the JSON text, the joined time series, its period in ns).
py::tuple run(const std::string& device_name, const std::string& kernel, const std::string& workload_file,
              const std::vector<std::string>& sets, const std::string& max_memory, bool progress, bool terminal) {
  struct Out {
    std::string json;
    core::TimeSeries series;
  };
  ProgressPipe pipe;
  Out out = interruptible<Out>(
      [&](const std::atomic<bool>& stop) {
        if (workload_file.empty() == kernel.empty())
          throw core::ConfigError(
              core::ConfigProblem{"", 0, "kernel/workload", "give exactly one of kernel or workload"});
        std::vector<config::Override> device_overrides;
        const auto workload_overrides = split(sets, device_overrides);
        config::WorkloadFileDevice file_device;
        const core::Workload workload = workload_file.empty()
                                            ? config::workload_for_kernel(kernel, workload_overrides)
                                            : config::load_workload_file(workload_file, workload_overrides, &file_device);
        // `device`, else the workload file's own device and its overrides (a point's config), else h200.
        const core::DeviceSpec device =
            config::load_device(config::device_for_run(device_name, file_device, device_overrides, "h200"), device_overrides);
        app::RunOptions options;
        if (!max_memory.empty()) {
          config::YamlReader reader("");
          const auto bytes = reader.as_bytes(YAML::Node(max_memory), "max_memory");
          reader.throw_if_problems();
          options.max_memory_bytes = *bytes;
        }
        app::RunProgressPrinter printer(progress ? &pipe.stream() : nullptr, terminal, terminal ? 1.0 : 10.0,
                                        terminal ? 0.25 : 10.0);
        options.engine.progress = [&printer](const engine::LaunchProgress& p) { printer(p); };
        options.interrupt = &stop;
        const core::RunResult result = app::run_workload(workload, device, options);
        printer.finish();
        std::ostringstream json;
        io::write_run_json(result, device, json);
        return Out{json.str(), io::joined_series(result)};
      },
      &pipe);
  return py::make_tuple(out.json, series_dict(out.series), out.series.period_ns);
}

// What cmd_sweep runs per point.
core::RunResult run_point(const core::Workload& w, const core::DeviceSpec& d) {
  static const app::RunOptions defaults;
  return app::run_workload(w, d, defaults);
}

// A sweep spec from a file (`spec_path`) or YAML text named `spec_name`, with "KEY=VALUE"
// overrides for every point (`attnsim sweep --set`).
config::SweepSpec load_spec(const std::string& spec_path, const std::string& spec_text, const std::string& spec_name,
                            const std::vector<std::string>& sets) {
  const std::vector<config::Override> overrides = config::parse_overrides(sets);
  return spec_path.empty() ? config::SweepLoader::load_text(spec_text, spec_name, overrides)
                           : config::SweepLoader::load_file(spec_path, overrides);
}

// `attnsim sweep` in one process: spec from a file (`spec_path`) or YAML text named `spec_name`.
// Writes `out_path`; returns the summary counts. Throws ConfigError for bad input (nothing written).
// Progress (`progress`) goes to sys.stderr: a redrawn bar on a `terminal`, else plain lines.
// `sets`: "KEY=VALUE" overrides for every point, as `attnsim sweep --set`.
py::dict sweep(const std::string& spec_path, const std::string& spec_text, const std::string& spec_name,
               const std::string& out_path, unsigned jobs, bool progress, bool terminal, bool resume,
               const std::string& command, const std::vector<std::string>& sets) {
  ProgressPipe pipe;
  const app::SweepSummary s = interruptible<app::SweepSummary>([&](const std::atomic<bool>& stop) {
    app::check_output_path(out_path, "out");
    const config::SweepSpec spec = load_spec(spec_path, spec_text, spec_name, sets);
    const config::SweepExpander validate(spec);  // bad axes or constraints: ConfigError before anything runs
    app::SweepRunOptions o;
    o.out_path = out_path;
    o.jobs = jobs;
    o.resume = resume;
    o.command_line = command;
    o.progress = progress ? &pipe.stream() : nullptr;
    o.progress_is_terminal = terminal;
    o.interrupt = &stop;
    app::SweepRunner runner(spec, o, &run_point);
    return runner.run();
  }, &pipe);
  py::dict d;
  d["total"] = s.total;
  d["resumed"] = s.resumed;
  d["ok"] = s.ok;
  d["impossible"] = s.impossible;
  d["error"] = s.error;
  return d;
}

// `attnsim sweep --dry-run` as data: one dict per point of the sweep (spec as for sweep()): its
// index, keys (typed), status ("ok" / "impossible"), estimated tile ops, CTAs and peak memory
// (None for impossible points) and the reason. Nothing is run or written.
py::list sweep_plan(const std::string& spec_path, const std::string& spec_text, const std::string& spec_name,
                    const std::vector<std::string>& sets) {
  const config::SweepSpec spec = load_spec(spec_path, spec_text, spec_name, sets);
  const app::SweepPlan plan =
      app::plan_sweep(config::SweepExpander(spec), {spec_path, 0, 1, app::default_max_memory_bytes()});
  py::list rows;
  for (const app::PlanRow& r : plan.rows) {
    py::dict d;
    d["point_index"] = r.index;
    for (const auto& [name, value] : r.params)
      d[py::str(name)] = std::visit(
          [](const auto& v) -> py::object {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) return py::none();
            else return py::cast(v);
          },
          value);
    d["status"] = r.ok ? "ok" : "impossible";
    d["tile_ops"] = r.ok ? py::cast(r.estimate.events) : py::none();
    d["ctas"] = r.ok ? py::cast(r.estimate.ctas) : py::none();
    d["peak_memory_bytes"] = r.ok ? py::cast(r.estimate.peak_memory_bytes()) : py::none();
    d["reason"] = r.reason;
    rows.append(d);
  }
  return rows;
}

// Any subcommand in-process (`attnsim ARGS...`): returns (exit code, stdout text). Errors raise
// ConfigError / SimulationError with the CLI's message instead of printing it. The command's
// progress goes to sys.stderr (`terminal`: one line rewritten), and Ctrl-C stops it (run: at the
// engine's next progress report; check: at its next progress report or row of functional mode).
py::tuple cli(const std::vector<std::string>& argv, bool terminal) {
  if (argv.empty()) throw core::ConfigError(core::ConfigProblem{"", 0, "", "no command"});
  const app::Command* cmd = nullptr;
  for (const auto& c : app::command_table())
    if (argv[0] == c.name) cmd = &c;
  if (!cmd) throw core::ConfigError(core::ConfigProblem{"", 0, "", "unknown command '" + argv[0] + "'"});
  const app::Args rest(argv.begin() + 1, argv.end());
  std::ostringstream text;
  ProgressPipe pipe;
  const int code = interruptible<int>(
      [&](const std::atomic<bool>& stop) {
        const app::ScopedCommandContext context(app::CommandContext{&stop, &pipe.stream(), terminal});
        return cmd->run(rest, text);
      },
      &pipe);
  return py::make_tuple(code, text.str());
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "attnsim's C++ core (use the attnsim package, not this module)";
  static py::exception<core::ConfigError> config_error(m, "ConfigError", PyExc_ValueError);
  static py::exception<core::SimError> simulation_error(m, "SimulationError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const core::ConfigError& e) {
      config_error(e.what());
    } catch (const boost::program_options::error& e) {
      config_error(e.what());
    } catch (const core::SimError& e) {
      simulation_error(e.what());
    } catch (const app::SweepInterrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const app::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });

  m.def("run", &run, py::arg("device"), py::arg("kernel"), py::arg("workload_file"), py::arg("sets"),
        py::arg("max_memory"), py::arg("progress") = false, py::arg("terminal") = false);
  m.def("sweep", &sweep, py::arg("spec_path"), py::arg("spec_text"), py::arg("spec_name"), py::arg("out"),
        py::arg("jobs"), py::arg("progress"), py::arg("terminal"), py::arg("resume"), py::arg("command_line"),
        py::arg("sets") = std::vector<std::string>{});
  m.def("sweep_plan", &sweep_plan, py::arg("spec_path"), py::arg("spec_text"), py::arg("spec_name"),
        py::arg("sets") = std::vector<std::string>{});
  m.def("cli", &cli, py::arg("argv"), py::arg("terminal") = false);
  // attnsim__bound of a metrics dict (the rule of `run --json`; "" when the busy metrics are absent).
  m.def("bound_of", [](const std::vector<std::pair<std::string, double>>& metrics) {
    core::Metrics ms;
    for (const auto& [name, value] : metrics) core::set_metric(ms, name, value);
    return core::bound_of(ms);
  });
  // attnsim__occupancy_limiter of a launch's metrics (the rule of `run --json`; "" when the
  // launch__occupancy_limit_* metrics are absent).
  m.def("occupancy_limiter_of", [](const std::vector<std::pair<std::string, double>>& metrics) {
    core::Metrics ms;
    for (const auto& [name, value] : metrics) core::set_metric(ms, name, value);
    return core::occupancy_limiter_of(ms);
  });
  // For the tests of the exception mapping above (a SimError cannot be provoked by input).
  m.def("_throw", [](const std::string& kind, const std::string& message) {
    if (kind == "config") throw core::ConfigError(core::ConfigProblem{"f.yaml", 3, "key.path", message});
    if (kind == "sim") throw core::SimError(message);
    if (kind == "option") throw boost::program_options::error(message);
    throw std::runtime_error(message);
  });
  m.def("device_presets", &config::device_preset_names);
  m.def("kernel_names", &config::known_kernel_names);
  m.def("device_yaml", [](const std::string& name, const std::vector<std::string>& sets) {
    std::vector<config::Override> device;
    const auto workload = split(sets, device);
    if (!workload.empty())
      throw core::ConfigError(core::ConfigProblem{"", 0, workload.front().key, "device keys only here"});
    return config::device_to_yaml(config::load_device(name, device));
  });
  m.def("device_fields", [](const std::string& name) { return fields_dict(io::device_fields(config::load_device(name))); });
  m.def("workload_fields", [](const std::string& kernel, const std::vector<std::string>& sets) {
    std::vector<config::Override> device;
    return fields_dict(io::workload_fields(config::workload_for_kernel(kernel, split(sets, device))));
  });
  m.def("workload_yaml", [](const std::string& kernel) {
    return config::workload_to_yaml(config::workload_for_kernel(kernel));
  });
}
