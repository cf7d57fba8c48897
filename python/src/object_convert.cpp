#include "object_convert.h"

#include <optional>
#include <string>

namespace crew::python {

namespace {

constexpr int kMaxDepth = 64;

bool starts_with_magic(const std::string& s) {
  return s.size() >= kPickleMagicSize && s.compare(0, kPickleMagicSize, kPickleMagic, kPickleMagicSize) == 0;
}

// nullopt when `value` (or something inside it) is not a plain value.
std::optional<dist::Object> plain(py::handle value, int depth) {
  using dist::Object;
  if (depth > kMaxDepth) return std::nullopt;
  if (value.is_none()) return Object();
  if (PyBool_Check(value.ptr())) return Object(value.cast<bool>());
  if (PyLong_CheckExact(value.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow != 0) return std::nullopt;
    return Object(v);
  }
  if (PyFloat_CheckExact(value.ptr())) return Object(value.cast<double>());
  if (PyUnicode_CheckExact(value.ptr())) return Object(value.cast<std::string>());
  if (PyBytes_CheckExact(value.ptr())) {
    std::string data = value.cast<std::string>();
    if (starts_with_magic(data)) return std::nullopt;
    return Object::bytes(std::move(data));
  }
  if (PyList_CheckExact(value.ptr()) || PyTuple_CheckExact(value.ptr())) {
    Object::Items items;
    for (py::handle item : value) {
      auto o = plain(item, depth + 1);
      if (!o) return std::nullopt;
      items.push_back(std::move(*o));
    }
    return Object::list(std::move(items));
  }
  if (PyDict_CheckExact(value.ptr())) {
    Object::Pairs pairs;
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(value)) {
      const bool key_ok = PyUnicode_CheckExact(k.ptr()) || PyLong_CheckExact(k.ptr());
      if (!key_ok) return std::nullopt;
      auto key = plain(k, depth + 1);
      auto val = plain(v, depth + 1);
      if (!key || !val) return std::nullopt;
      pairs.emplace_back(std::move(*key), std::move(*val));
    }
    return Object::dict_of(std::move(pairs));
  }
  return std::nullopt;
}

}  // namespace

dist::Object object_from_py(py::handle value) {
  if (auto o = plain(value, 0)) return std::move(*o);
  py::bytes pickled = py::module_::import("pickle").attr("dumps")(value, 4);
  return dist::Object::bytes(std::string(kPickleMagic, kPickleMagicSize) + std::string(pickled));
}

py::object object_to_py(const dist::Object& obj) {
  using Kind = dist::Object::Kind;
  switch (obj.kind()) {
    case Kind::NONE: return py::none();
    case Kind::BOOL: return py::bool_(obj.as_bool());
    case Kind::INT: return py::int_(obj.as_int());
    case Kind::FLOAT: return py::float_(obj.as_float());
    case Kind::STR: return py::str(obj.as_str());
    case Kind::BYTES: {
      const std::string& b = obj.as_bytes();
      if (!starts_with_magic(b)) return py::bytes(b);
      return py::module_::import("pickle").attr("loads")(py::bytes(b.substr(kPickleMagicSize)));
    }
    case Kind::LIST: {
      py::list out;
      for (const auto& item : obj.as_list()) out.append(object_to_py(item));
      return std::move(out);
    }
    case Kind::DICT: {
      py::dict out;
      for (const auto& [k, v] : obj.as_dict()) out[object_to_py(k)] = object_to_py(v);
      return std::move(out);
    }
  }
  return py::none();
}

}  // namespace crew::python
