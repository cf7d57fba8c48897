// crew._C.io: data sets, samplers and the DataLoader. A data set written in Python
// (__getitem__, __len__) is wrapped in a C++ Dataset whose get() takes the GIL only to call
// __getitem__; built-in data sets (crew._C.io.Dataset subclasses) load without it. The
// loader's worker threads are crew::io::DataLoader's; iteration releases the GIL while a
// batch is awaited, so workers calling Python can run.
#include <pybind11/stl.h>

#include <cmath>

#include "bindings.h"
#include "crew/core/check.h"
#include "crew/io/io.h"
#include "py_data.h"
#include "tensor_numpy.h"

namespace crew::python {

namespace {

using io::BatchSamplerBase;
using io::DataLoader;
using Release = py::call_guard<py::gil_scoped_release>;

// A Python iterable of index lists (a user's batch sampler) as a BatchSamplerBase.
class PyBatchSampler : public BatchSamplerBase {
 public:
  explicit PyBatchSampler(py::object sampler) : sampler_(new py::object(std::move(sampler))) {}
  ~PyBatchSampler() override { release_py(sampler_); }
  std::vector<io::BatchIndices> batches() override {
    py::gil_scoped_acquire gil;
    std::vector<io::BatchIndices> out;
    for (py::handle b : *sampler_) out.push_back(b.cast<io::BatchIndices>());
    return out;
  }
  int64_t size() const override {
    py::gil_scoped_acquire gil;
    return static_cast<int64_t>(py::len(*sampler_));
  }

 private:
  py::object* sampler_;
};

std::shared_ptr<BatchSamplerBase> batch_sampler_from_py(py::handle obj) {
  if (py::isinstance<BatchSamplerBase>(obj)) return obj.cast<std::shared_ptr<BatchSamplerBase>>();
  if (!py::hasattr(obj, "__iter__") || !py::hasattr(obj, "__len__")) {
    throw py::type_error("DataLoader: batch_sampler must be a crew.io batch sampler or an iterable of index "
                         "lists with __len__, got " + std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  return std::make_shared<PyBatchSampler>(py::reinterpret_borrow<py::object>(obj));
}

// A Python collate_fn(list of samples) -> batch, called with the GIL from the loader.
io::CollateFn collate_from_py(py::object fn) {
  if (fn.is_none()) return {};
  auto holder = std::shared_ptr<py::object>(new py::object(std::move(fn)), [](py::object* p) { release_py(p); });
  return [holder](const std::vector<io::Sample>& samples) {
    py::gil_scoped_acquire gil;
    py::list batch;
    for (const auto& s : samples) batch.append(py::cast(s));
    return sample_from_py((*holder)(batch), "collate_fn");
  };
}

int64_t num_samples_of(py::handle dataset) { return static_cast<int64_t>(py::len(dataset)); }

// A DataLoader as Python sees it.
struct PyLoader {
  std::shared_ptr<DataLoader> loader;
  std::shared_ptr<const PyDataset> py_dataset;  // a Python data set: one-field samples give bare tensors
  py::object batch_sampler;
};

// One pass over a DataLoader, as a Python iterator.
struct LoaderIter {
  PyLoader source;
  std::unique_ptr<DataLoader::Iterator> it;
  bool first = true;
  ~LoaderIter() {
    if (it && Py_IsInitialized() && PyGILState_Check()) {
      py::gil_scoped_release nogil;  // workers may be waiting for the GIL
      it.reset();
    }
  }
  py::object next() {
    if (!it) throw py::stop_iteration();
    {
      py::gil_scoped_release nogil;
      if (!first) ++*it;
      first = false;
      if (it->at_end()) it.reset();
    }
    if (!it) throw py::stop_iteration();
    io::Batch& b = **it;
    const auto& ds = source.py_dataset;
    if (ds && ds->single_field() && b.size() == 1) return py::cast(std::move(b[0]));
    py::list out;
    for (auto& t : b) out.append(py::cast(std::move(t)));
    return out;
  }
};

std::unique_ptr<LoaderIter> start_pass(const PyLoader& l) {
  auto iter = std::make_unique<LoaderIter>();
  iter->source = l;
  py::gil_scoped_release nogil;
  iter->it = std::make_unique<DataLoader::Iterator>(l.loader->begin());
  return iter;
}

// Paddle's DataLoader(dataset, batch_size=1, shuffle=False, drop_last=False, batch_sampler=None,
// collate_fn=None, num_workers=0, use_shared_memory=True, timeout=0, prefetch_factor=2, ...).

PyLoader make_loader(py::object dataset, py::object batch_sampler, int64_t batch_size, bool shuffle,
                     bool drop_last, py::object collate_fn, int num_workers, bool use_shared_memory,
                     double timeout, int prefetch_factor) {
  io::DataLoaderOptions o;
  o.num_workers = num_workers;
  o.prefetch_factor = prefetch_factor;
  o.use_shared_memory = use_shared_memory;
  CREW_CHECK(timeout >= 0 && timeout < 1e9, "DataLoader: timeout must be >= 0 seconds (0: no timeout), got ", timeout);
  // Rounded up: a small positive timeout must not become 0, which means none.
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(timeout * 1000.0)));
  o.collate_fn = collate_from_py(collate_fn);
  std::shared_ptr<const io::Dataset> ds = dataset_from_py(dataset);
  PyLoader out;
  out.py_dataset = std::dynamic_pointer_cast<const PyDataset>(ds);
  if (batch_sampler.is_none()) {
    o.batch_size = batch_size;
    o.shuffle = shuffle;
    o.drop_last = drop_last;
    out.loader = std::make_shared<DataLoader>(ds, o);
  } else {
    CREW_CHECK(batch_size == 1 && !shuffle && !drop_last,
               "DataLoader: batch_size, shuffle and drop_last must keep their defaults when batch_sampler is given");
    out.loader = std::make_shared<DataLoader>(ds, batch_sampler_from_py(batch_sampler), o);
  }
  out.batch_sampler = batch_sampler.is_none() ? py::cast(out.loader->batch_sampler()) : batch_sampler;
  return out;
}

void bind_datasets(py::module_& io) {
  py::class_<io::Dataset, std::shared_ptr<io::Dataset>>(io, "Dataset", "A data set implemented in C++")
      .def("__len__", &io::Dataset::size)
      .def("__getitem__", [](const io::Dataset& d, int64_t i) {
             if (i < 0) i += d.size();
             io::Sample s;
             {
               py::gil_scoped_release nogil;
               s = d.get(i);
             }
             return py::tuple(py::cast(s));
           });
  py::class_<io::TensorDataset, io::Dataset, std::shared_ptr<io::TensorDataset>>(io, "TensorDataset")
      .def(py::init<std::vector<Tensor>>(), py::arg("tensors"));
}

void bind_samplers(py::module_& io) {
  py::class_<io::Sampler, std::shared_ptr<io::Sampler>>(io, "Sampler")
      .def("__len__", &io::Sampler::size)
      .def("__iter__", [](io::Sampler& s) { return py::iter(py::cast(s.indices())); });
  py::class_<io::SequenceSampler, io::Sampler, std::shared_ptr<io::SequenceSampler>>(io, "SequenceSampler")
      .def(py::init([](py::object data_source) { return std::make_shared<io::SequenceSampler>(num_samples_of(data_source)); }),
           py::arg("data_source"));
  py::class_<io::RandomSampler, io::Sampler, std::shared_ptr<io::RandomSampler>>(io, "RandomSampler")
      .def(py::init([](py::object data_source) { return std::make_shared<io::RandomSampler>(num_samples_of(data_source)); }),
           py::arg("data_source"));

  py::class_<BatchSamplerBase, std::shared_ptr<BatchSamplerBase>>(io, "BatchSamplerBase")
      .def("__len__", &BatchSamplerBase::size)
      .def("__iter__", [](BatchSamplerBase& s) { return py::iter(py::cast(s.batches())); });
  py::class_<io::BatchSampler, BatchSamplerBase, std::shared_ptr<io::BatchSampler>>(io, "BatchSampler")
      .def(py::init([](py::object dataset, py::object sampler, bool shuffle, int64_t batch_size, bool drop_last) {
             CREW_CHECK(dataset.is_none() != sampler.is_none(), "BatchSampler: give either dataset or sampler");
             std::shared_ptr<io::Sampler> s;
             if (!sampler.is_none()) {
               CREW_CHECK(!shuffle, "BatchSampler: shuffle must be False when a sampler is given");
               s = cast_arg<std::shared_ptr<io::Sampler>>(sampler, "BatchSampler", "sampler", "a Sampler or None");
             } else if (shuffle) {
               s = std::make_shared<io::RandomSampler>(num_samples_of(dataset));
             } else {
               s = std::make_shared<io::SequenceSampler>(num_samples_of(dataset));
             }
             return std::make_shared<io::BatchSampler>(s, batch_size, drop_last);
           }), py::arg("dataset") = py::none(), py::arg("sampler") = py::none(), py::arg("shuffle") = false,
           py::arg("batch_size") = 1, py::arg("drop_last") = false)
      .def_property_readonly("batch_size", &io::BatchSampler::batch_size)
      .def_property_readonly("drop_last", &io::BatchSampler::drop_last);

  using DBS = io::DistributedBatchSampler;
  py::class_<DBS, BatchSamplerBase, std::shared_ptr<DBS>>(io, "DistributedBatchSampler")
      .def(py::init([](py::object dataset, int64_t batch_size, py::object num_replicas, py::object rank,
                       bool shuffle, bool drop_last) {
             io::DistributedBatchSamplerOptions o;
             o.num_replicas = num_replicas.is_none()
                                 ? -1
                                 : cast_arg<int>(num_replicas, "DistributedBatchSampler", "num_replicas", "an int or None");
             o.rank = rank.is_none() ? -1 : cast_arg<int>(rank, "DistributedBatchSampler", "rank", "an int or None");
             o.shuffle = shuffle;
             o.drop_last = drop_last;
             return std::make_shared<DBS>(num_samples_of(dataset), batch_size, o);
           }), py::arg("dataset"), py::arg("batch_size"), py::arg("num_replicas") = py::none(),
           py::arg("rank") = py::none(), py::arg("shuffle") = false, py::arg("drop_last") = false)
      .def("set_epoch", &DBS::set_epoch, py::arg("epoch"))
      .def_property_readonly("epoch", &DBS::epoch)
      .def_property_readonly("nranks", &DBS::num_replicas)
      .def_property_readonly("local_rank", &DBS::rank)
      .def_property_readonly("num_samples", &DBS::num_samples)
      .def_property_readonly("total_size", &DBS::total_size);
}

void bind_loader(py::module_& io) {
  py::class_<LoaderIter>(io, "_LoaderIter")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &LoaderIter::next);
  py::class_<PyLoader>(io, "DataLoader")
      .def(py::init(&make_loader), py::arg("dataset"), py::arg("batch_sampler") = py::none(),
           py::arg("batch_size") = 1, py::arg("shuffle") = false, py::arg("drop_last") = false,
           py::arg("collate_fn") = py::none(), py::arg("num_workers") = 0, py::arg("use_shared_memory") = true,
           py::arg("timeout") = 0.0, py::arg("prefetch_factor") = 2)
      .def("__iter__", &start_pass)
      .def("__call__", &start_pass)
      .def("__len__", [](const PyLoader& l) {
        py::gil_scoped_release nogil;
        return l.loader->size();
      })
      .def_property_readonly("num_workers", [](const PyLoader& l) { return l.loader->options().num_workers; })
      .def_property_readonly("batch_sampler", [](const PyLoader& l) { return l.batch_sampler; });
}

// A list of Python samples as one batch by crew::io::default_collate (the iterable loader's).
py::object collate_py(const py::list& samples) {
  std::vector<io::Sample> in;
  bool single = false;
  for (py::handle s : samples) in.push_back(sample_from_py(s, "DataLoader collate", &single));
  io::Batch b;
  {
    py::gil_scoped_release nogil;
    b = io::default_collate(in);
  }
  if (single && b.size() == 1) return py::cast(std::move(b[0]));
  py::list out;
  for (auto& t : b) out.append(py::cast(std::move(t)));
  return out;
}

}  // namespace

void bind_io(py::module_& m) {
  py::module_ io = m.def_submodule("io", "crew::io: data sets, samplers, DataLoader");
  bind_datasets(io);
  bind_samplers(io);
  bind_loader(io);
  io.def("_default_collate", &collate_py, py::arg("samples"));
}

}  // namespace crew::python
