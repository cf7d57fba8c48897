#include "crew/nn/layer.h"

#include <map>
#include <mutex>
#include <unordered_set>

#include "crew/core/check.h"
#include "crew/core/logging.h"

namespace crew::nn {
namespace {

std::string unique_full_name(const std::string& scope) {
  static std::mutex mu;
  static std::map<std::string, int64_t> counters;
  std::lock_guard<std::mutex> lock(mu);
  return str_cat(scope, "_", counters[scope]++);
}

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

}  // namespace

Layer::Layer(const std::string& name_scope) : full_name_(unique_full_name(name_scope)) {}

void Layer::check_new_name(const std::string& name, const char* what) const {
  CREW_CHECK(!name.empty(), full_name_, ": ", what, " name is empty");
  CREW_CHECK(name.find('.') == std::string::npos, full_name_, ": ", what, " name '", name, "' contains '.'");
  for (const auto& p : parameters_) {
    CREW_CHECK(p.name != name, full_name_, ": ", what, " '", name, "' already registered as a parameter");
  }
  for (const auto& b : buffers_) {
    CREW_CHECK(b.name != name, full_name_, ": ", what, " '", name, "' already registered as a buffer");
  }
  for (const auto& s : sublayers_) {
    CREW_CHECK(s.first != name, full_name_, ": ", what, " '", name, "' already registered as a sublayer");
  }
}

Tensor Layer::register_parameter(const std::string& name, Tensor param) {
  check_new_name(name, "parameter");
  CREW_CHECK(param.defined(), full_name_, ": parameter '", name, "' is undefined");
  param.set_stop_gradient(false);
  parameters_.push_back({name, param, true});
  return param;
}

Tensor Layer::register_buffer(const std::string& name, Tensor buffer, bool persistable) {
  check_new_name(name, "buffer");
  CREW_CHECK(buffer.defined(), full_name_, ": buffer '", name, "' is undefined");
  buffers_.push_back({name, buffer, persistable});
  return buffer;
}

void Layer::add_sublayer_impl(const std::string& name, std::shared_ptr<Layer> layer) {
  check_new_name(name, "sublayer");
  CREW_CHECK(layer != nullptr, full_name_, ": sublayer '", name, "' is null");
  CREW_CHECK(layer.get() != this, full_name_, ": sublayer '", name, "' is the layer itself");
  for (const auto& [inner_name, inner] : layer->named_sublayers(name)) {
    CREW_CHECK(inner.get() != this, full_name_, ": sublayer '", name, "' contains this layer (as '",
               inner_name, "'); layer trees must not have cycles");
  }
  sublayers_.emplace_back(name, std::move(layer));
}

std::vector<std::pair<std::string, std::shared_ptr<Layer>>> Layer::named_sublayers(
    const std::string& prefix) const {
  std::vector<std::pair<std::string, std::shared_ptr<Layer>>> out;
  std::unordered_set<const Layer*> seen{this};
  // Iterative pre-order walk; children are pushed in reverse so they pop in order.
  std::vector<std::pair<std::shared_ptr<Layer>, std::string>> work;
  for (auto it = sublayers_.rbegin(); it != sublayers_.rend(); ++it) {
    work.emplace_back(it->second, join(prefix, it->first));
  }
  while (!work.empty()) {
    auto [layer, name] = work.back();
    work.pop_back();
    if (!seen.insert(layer.get()).second) continue;
    out.emplace_back(name, layer);
    for (auto it = layer->sublayers_.rbegin(); it != layer->sublayers_.rend(); ++it) {
      work.emplace_back(it->second, join(name, it->first));
    }
  }
  return out;
}

std::vector<std::shared_ptr<Layer>> Layer::sublayers() const {
  std::vector<std::shared_ptr<Layer>> out;
  for (auto& [name, layer] : named_sublayers()) out.push_back(layer);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Layer>>> Layer::named_children() const {
  return sublayers_;
}

std::vector<std::shared_ptr<Layer>> Layer::children() const {
  std::vector<std::shared_ptr<Layer>> out;
  for (const auto& s : sublayers_) out.push_back(s.second);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Layer::named_tensors(std::vector<NamedTensor> Layer::*list,
                                                                 const std::string& prefix,
                                                                 bool include_sublayers) const {
  std::vector<std::pair<std::string, Tensor>> out;
  std::unordered_set<const TensorImpl*> seen;
  auto take = [&](const Layer& layer, const std::string& layer_name) {
    for (const auto& entry : layer.*list) {
      if (seen.insert(entry.tensor.impl()).second)
        out.emplace_back(join(layer_name, entry.name), entry.tensor);
    }
  };
  take(*this, prefix);
  if (include_sublayers) {
    for (const auto& [name, layer] : named_sublayers(prefix)) take(*layer, name);
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> Layer::named_parameters(const std::string& prefix,
                                                                    bool include_sublayers) const {
  return named_tensors(&Layer::parameters_, prefix, include_sublayers);
}

std::vector<Tensor> Layer::parameters(bool include_sublayers) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters("", include_sublayers)) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Layer::named_buffers(const std::string& prefix,
                                                                 bool include_sublayers) const {
  return named_tensors(&Layer::buffers_, prefix, include_sublayers);
}

std::vector<Tensor> Layer::buffers(bool include_sublayers) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_buffers("", include_sublayers)) out.push_back(t);
  return out;
}

Tensor Layer::parameter(const std::string& name) const {
  for (const auto& p : parameters_) {
    if (p.name == name) return p.tensor;
  }
  CREW_THROW(IndexError, full_name_, ": no parameter '", name, "'");
}

std::shared_ptr<Layer> Layer::sublayer(const std::string& name) const {
  for (const auto& s : sublayers_) {
    if (s.first == name) return s.second;
  }
  CREW_THROW(IndexError, full_name_, ": no sublayer '", name, "'");
}

void Layer::apply(const std::function<void(Layer&)>& fn) {
  for (auto& s : sublayers_) s.second->apply(fn);
  fn(*this);
}

Layer& Layer::to(const Place& place) {
  for (Tensor& p : parameters()) {
    if (p.place() == place) continue;
    p.clear_grad();
    p.move_to_(place);
  }
  for (Tensor& b : buffers()) b.move_to_(place);
  return *this;
}

Layer& Layer::to(DType dtype) {
  CREW_CHECK(is_floating(dtype), full_name_, ".to: dtype must be a floating-point type, got ", dtype_name(dtype));
  for (Tensor& p : parameters()) {
    if (!is_floating(p.dtype()) || p.dtype() == dtype) continue;
    p.clear_grad();
    p.convert_(dtype);
  }
  for (Tensor& b : buffers()) {
    if (is_floating(b.dtype())) b.convert_(dtype);
  }
  return *this;
}

void Layer::train() {
  training_ = true;
  for (auto& [name, layer] : sublayers_) layer->train();
}

void Layer::eval() {
  training_ = false;
  for (auto& [name, layer] : sublayers_) layer->eval();
}

void Layer::collect_state(const std::string& prefix, StateDict& out) const {
  // Paddle's order: a layer's parameters, then its persistable buffers, then each sublayer.
  for (const auto& p : parameters_) {
    std::string key = join(prefix, p.name);
    if (!out.contains(key)) out.insert(key, p.tensor);
  }
  for (const auto& b : buffers_) {
    std::string key = join(prefix, b.name);
    if (b.persistable && !out.contains(key)) out.insert(key, b.tensor);
  }
  for (const auto& [name, layer] : sublayers_) layer->collect_state(join(prefix, name), out);
}

StateDict Layer::state_dict() const {
  StateDict out;
  collect_state("", out);
  return out;
}

void Layer::set_state_dict(const StateDict& state_dict, bool strict) {
  StateDict mine = this->state_dict();
  // Validate everything first, so that a failure leaves the layer unchanged.
  std::vector<std::string> missing;
  for (const auto& [key, dst] : mine) {
    if (!state_dict.contains(key)) {
      missing.push_back(key);
      continue;
    }
    const Tensor& src = state_dict.at(key);
    CREW_CHECK(src.shape() == dst.shape(), full_name_, ".set_state_dict: shape mismatch for '", key,
               "': checkpoint has ", shape_str(src.shape()), ", layer expects ", shape_str(dst.shape()));
  }
  if (strict) {
    if (!missing.empty()) {
      std::string list;
      for (const auto& k : missing) {
        if (!list.empty()) list += ", ";
        list += "'";
        list += k;
        list += "'";
      }
      CREW_THROW(ValueError, full_name_, ".set_state_dict: missing key(s) ", list, " (", missing.size(),
                 " of ", mine.size(), ")");
    }
    for (const auto& [key, src] : state_dict) {
      CREW_CHECK(mine.contains(key), full_name_, ".set_state_dict: unexpected key '", key, "' with shape ",
                 shape_str(src.shape()));
    }
  }
  if (!strict) {
    for (const auto& k : missing) {
      CREW_LOG(WARNING) << full_name_ << ".set_state_dict: key '" << k
                        << "' not in the state dict; keeping its value";
    }
    for (const auto& [key, src] : state_dict) {
      if (!mine.contains(key)) {
        CREW_LOG(WARNING) << full_name_ << ".set_state_dict: ignoring unexpected key '" << key << "'";
      }
    }
  }
  for (const auto& [key, dst] : mine) {
    if (!state_dict.contains(key)) continue;
    const Tensor& src = state_dict.at(key);
    if (src.is_same(dst)) continue;
    Tensor target = dst;
    target.copy_(src.dtype() == dst.dtype() ? src : src.to(dst.dtype()));
  }
}

void Layer::clear_gradients(bool set_to_zero) {
  for (Tensor& p : parameters()) p.clear_grad(set_to_zero);
}

}  // namespace crew::nn
