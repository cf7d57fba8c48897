#include "object_convert.h"

#include <atomic>
#include <optional>
#include <string>

#include "crew/core/check.h"
#include "crew/core/env.h"

namespace crew::python {

namespace {

constexpr int kMaxDepth = 64;
constexpr const char* kPlainValues =
    "None, bool, int (64-bit), float, str, bytes, and list, tuple or dict (str or int keys) of those";
constexpr const char* kHowToEnable =
    "call crew.distributed.set_object_pickle(True) (or set CREW_OBJECT_PICKLE=1) on every rank, "
    "and only when every process of the job is trusted: unpickling runs code the sender chose";

// -1: not decided yet (CREW_OBJECT_PICKLE is read on first use); 0 off; 1 on.
std::atomic<int> g_pickle{-1};

bool starts_with(const std::string& s, const char* magic, size_t size) {
  return s.size() >= size && s.compare(0, size, magic, size) == 0;
}

bool starts_with_marker(const std::string& s) {
  return starts_with(s, kPickleMagic, kPickleMagicSize) || starts_with(s, kRefusedMagic, kRefusedMagicSize);
}

std::string type_name(py::handle value) { return py::str(py::type::handle_of(value).attr("__qualname__")); }

// nullopt when `value` (or something inside it) is not a plain value; *offender is then that
// value's type name.
std::optional<dist::Object> plain(py::handle value, int depth, std::string* offender) {
  using dist::Object;
  auto not_plain = [&](const std::string& why) -> std::optional<Object> {
    if (offender->empty()) *offender = why;
    return std::nullopt;
  };
  if (depth > kMaxDepth) return not_plain(str_cat("a value nested deeper than ", kMaxDepth, " levels"));
  if (value.is_none()) return Object();
  if (PyBool_Check(value.ptr())) return Object(value.cast<bool>());
  if (PyLong_CheckExact(value.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow != 0) return not_plain("int beyond 64 bits");
    return Object(v);
  }
  if (PyFloat_CheckExact(value.ptr())) return Object(value.cast<double>());
  if (PyUnicode_CheckExact(value.ptr())) return Object(value.cast<std::string>());
  if (PyBytes_CheckExact(value.ptr())) {
    std::string data = value.cast<std::string>();
    if (starts_with_marker(data)) return not_plain("bytes starting with crew's pickle marker");
    return Object::bytes(std::move(data));
  }
  if (PyList_CheckExact(value.ptr()) || PyTuple_CheckExact(value.ptr())) {
    Object::Items items;
    for (py::handle item : value) {
      auto o = plain(item, depth + 1, offender);
      if (!o) return std::nullopt;
      items.push_back(std::move(*o));
    }
    return Object::list(std::move(items));
  }
  if (PyDict_CheckExact(value.ptr())) {
    Object::Pairs pairs;
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(value)) {
      const bool key_ok = PyUnicode_CheckExact(k.ptr()) || PyLong_CheckExact(k.ptr());
      if (!key_ok) return not_plain(str_cat("a dict key of type '", type_name(k), "'"));
      auto key = plain(k, depth + 1, offender);
      if (!key) return std::nullopt;
      auto val = plain(v, depth + 1, offender);
      if (!val) return std::nullopt;
      pairs.emplace_back(std::move(*key), std::move(*val));
    }
    return Object::dict_of(std::move(pairs));
  }
  return not_plain(str_cat("'", type_name(value), "'"));
}

std::string sender(const ObjectSource& from) {
  return from.rank >= 0 ? str_cat("rank ", from.rank) : std::string("a peer");
}

}  // namespace

bool object_pickle_enabled() {
  int state = g_pickle.load();
  if (state < 0) {
    state = env::get_bool("CREW_OBJECT_PICKLE", false) ? 1 : 0;
    int expected = -1;
    if (!g_pickle.compare_exchange_strong(expected, state)) state = expected;
  }
  return state == 1;
}

void set_object_pickle(bool enabled) { g_pickle.store(enabled ? 1 : 0); }

dist::Object object_from_py(py::handle value, const char* op, std::string* refused) {
  std::string offender;
  if (auto o = plain(value, 0, &offender)) return std::move(*o);
  if (object_pickle_enabled()) {
    py::bytes pickled = py::module_::import("pickle").attr("dumps")(value, 4);
    return dist::Object::bytes(std::string(kPickleMagic, kPickleMagicSize) + std::string(pickled));
  }
  if (refused && refused->empty()) {
    *refused = str_cat(op, ": cannot send a value of type '", type_name(value), "' (it holds ", offender,
                       "): without pickling only plain values travel (", kPlainValues, "); to send other "
                       "objects, ", kHowToEnable);
  }
  return dist::Object::bytes(std::string(kRefusedMagic, kRefusedMagicSize) + offender);
}

py::object object_to_py(const dist::Object& obj, const ObjectSource& from) {
  using Kind = dist::Object::Kind;
  switch (obj.kind()) {
    case Kind::NONE: return py::none();
    case Kind::BOOL: return py::bool_(obj.as_bool());
    case Kind::INT: return py::int_(obj.as_int());
    case Kind::FLOAT: return py::float_(obj.as_float());
    case Kind::STR: return py::str(obj.as_str());
    case Kind::BYTES: {
      const std::string& b = obj.as_bytes();
      if (starts_with(b, kRefusedMagic, kRefusedMagicSize)) {
        throw py::value_error(str_cat(from.op, ": ", sender(from), " could not send its object (it holds ",
                                      b.substr(kRefusedMagicSize), ", not a plain value, and pickling is off "
                                      "there); to exchange such objects, ", kHowToEnable));
      }
      if (!starts_with(b, kPickleMagic, kPickleMagicSize)) return py::bytes(b);
      if (!object_pickle_enabled()) {
        throw py::value_error(str_cat(from.op, ": ", sender(from), " sent a pickled object and this rank "
                                      "refuses to unpickle it (pickling is off here); to accept it, ",
                                      kHowToEnable));
      }
      return py::module_::import("pickle").attr("loads")(py::bytes(b.substr(kPickleMagicSize)));
    }
    case Kind::LIST: {
      py::list out;
      for (const auto& item : obj.as_list()) out.append(object_to_py(item, from));
      return std::move(out);
    }
    case Kind::DICT: {
      py::dict out;
      for (const auto& [k, v] : obj.as_dict()) out[object_to_py(k, from)] = object_to_py(v, from);
      return std::move(out);
    }
  }
  return py::none();
}

}  // namespace crew::python
