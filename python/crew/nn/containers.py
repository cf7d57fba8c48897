"""Paddle's containers: LayerList, LayerDict, ParameterList. Their entries are sub-layers
(parameters) named "0", "1", ... or by key, so state_dict keys read "blocks.0.weight"."""
import collections

from .layer import Layer


class LayerList(Layer):
    def __init__(self, sublayers=None):
        super().__init__()
        for layer in sublayers or []:
            self.append(layer)

    def _index(self, idx):
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"LayerList: index {idx} is out of range for {n} layers")
        return idx + n if idx < 0 else idx

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return LayerList(list(self._sub_layers.values())[idx])
        return self._sub_layers[str(self._index(idx))]

    def __setitem__(self, idx, layer):
        self._sub_layers[str(self._index(idx))] = layer

    def __delitem__(self, idx):
        layers = list(self._sub_layers.values())
        del layers[idx if isinstance(idx, slice) else self._index(idx)]
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self._sub_layers[str(i)] = layer

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(list(self._sub_layers.values()))

    def append(self, sublayer):
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def insert(self, index, sublayer):
        layers = list(self._sub_layers.values())
        layers.insert(index, sublayer)
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self._sub_layers[str(i)] = layer

    def extend(self, sublayers):
        for layer in sublayers:
            self.append(layer)
        return self


class LayerDict(Layer):
    def __init__(self, sublayers=None):
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key):
        return self._sub_layers[key]

    def __setitem__(self, key, sublayer):
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key):
        del self._sub_layers[key]

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers)

    def __contains__(self, key):
        return key in self._sub_layers

    def clear(self):
        self._sub_layers.clear()

    def pop(self, key):
        return self._sub_layers.pop(key)

    def keys(self):
        return self._sub_layers.keys()

    def items(self):
        return self._sub_layers.items()

    def values(self):
        return self._sub_layers.values()

    def update(self, sublayers):
        items = sublayers.items() if isinstance(sublayers, (dict, collections.OrderedDict, LayerDict)) \
            else sublayers
        for key, layer in items:
            self.add_sublayer(key, layer)


class ParameterList(Layer):
    def __init__(self, parameters=None):
        super().__init__()
        for p in parameters or []:
            self.append(p)

    def __getitem__(self, idx):
        return list(self._parameters.values())[idx]

    def __setitem__(self, idx, param):
        key = list(self._parameters.keys())[idx]
        self._parameters[key] = param
        param.persistable = True

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(list(self._parameters.values()))

    def append(self, parameter):
        self.add_parameter(str(len(self)), parameter)
        return self
