#include "embed/weights.hpp"

#include <bit>
#include <cstring>
#include <fstream>

#include "common/json.hpp"

namespace mcpdb::embed {
namespace {

static_assert(std::endian::native == std::endian::little, "TF.js shards are little-endian");
static_assert(sizeof(float) == 4);

constexpr std::size_t kMaxModelJsonBytes = std::size_t{16} * 1024 * 1024;
constexpr std::size_t kMaxWeightBytes = std::size_t{1024} * 1024 * 1024;

Error loadError(const std::filesystem::path& where, const std::string& what) {
  return makeError(Code::FailedPrecondition, "model " + where.string() + ": " + what);
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// A shard path must be a plain file name next to model.json.
bool isPlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

}  // namespace

Result<WeightStore> WeightStore::load(const std::filesystem::path& dir) {
  const auto modelPath = dir / "model.json";
  std::error_code ec;
  const auto jsonSize = std::filesystem::file_size(modelPath, ec);
  if (ec) return loadError(modelPath, "cannot read: " + ec.message());
  if (jsonSize > kMaxModelJsonBytes) return loadError(modelPath, "too large");
  std::string text(static_cast<std::size_t>(jsonSize), '\0');
  {
    std::ifstream in(modelPath, std::ios::binary);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (!in || in.gcount() != static_cast<std::streamsize>(text.size()))
      return loadError(modelPath, "short read");
  }
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return loadError(modelPath, "not a JSON object");
  auto manifest = doc.find("weightsManifest");
  if (manifest == doc.end() || !manifest->is_array() || manifest->empty()) {
    return loadError(modelPath, "no weightsManifest");
  }

  WeightStore store;
  store.dir_ = dir;
  // First pass: lay the tensors out and check the manifest itself.
  struct Group {
    std::vector<std::string> paths;
    std::size_t elements = 0;
  };
  std::vector<Group> groups;
  std::size_t total = 0;
  for (const Json& g : *manifest) {
    if (!g.is_object() || !g.contains("paths") || !g.contains("weights") ||
        !g["paths"].is_array() || !g["weights"].is_array()) {
      return loadError(modelPath, "malformed weightsManifest group");
    }
    Group group;
    for (const Json& p : g["paths"]) {
      if (!p.is_string() || !isPlainFileName(p.get<std::string>()))
        return loadError(modelPath, "bad shard path");
      group.paths.push_back(p.get<std::string>());
    }
    for (const Json& w : g["weights"]) {
      if (!w.is_object() || !w.contains("name") || !w["name"].is_string() || !w.contains("dtype") ||
          !w["dtype"].is_string() || !w.contains("shape") || !w["shape"].is_array()) {
        return loadError(modelPath, "malformed weight entry");
      }
      const auto name = w["name"].get<std::string>();
      if (w.contains("quantization"))
        return loadError(modelPath, "tensor " + name + " is quantized (unsupported)");
      Tensor t;
      t.dtype = w["dtype"].get<std::string>();
      if (t.dtype != "float32" && t.dtype != "int32") {
        return loadError(modelPath, "tensor " + name + " has unsupported dtype " + t.dtype);
      }
      std::size_t count = 1;
      for (const Json& d : w["shape"]) {
        if (!d.is_number_integer() || d.get<std::int64_t>() < 0 ||
            d.get<std::int64_t>() > (1 << 28)) {
          return loadError(modelPath, "tensor " + name + " has a bad shape");
        }
        t.shape.push_back(d.get<std::int64_t>());
        count *= static_cast<std::size_t>(d.get<std::int64_t>());
        if (count > kMaxWeightBytes / 4)
          return loadError(modelPath, "tensor " + name + " is too large");
      }
      t.offset = total;
      t.count = count;
      total += count;
      group.elements += count;
      if (total > kMaxWeightBytes / 4) return loadError(modelPath, "weights are too large");
      if (!store.tensors_.emplace(name, std::move(t)).second)
        return loadError(modelPath, "tensor " + name + " listed twice");
    }
    groups.push_back(std::move(group));
  }

  // Second pass: read the shards; each group's shards must add up to exactly its tensors' bytes.
  store.data_.resize(total);
  auto* out = reinterpret_cast<char*>(store.data_.data());
  for (const Group& g : groups) {
    std::size_t groupBytes = 0;
    for (const std::string& p : g.paths) {
      const auto shardPath = dir / p;
      const auto size = std::filesystem::file_size(shardPath, ec);
      if (ec) return loadError(shardPath, "missing weight shard: " + ec.message());
      if (groupBytes + size > g.elements * 4) {
        return loadError(shardPath,
                         "weight shard is larger than the manifest says (corrupt or wrong model)");
      }
      std::ifstream in(shardPath, std::ios::binary);
      in.read(out, static_cast<std::streamsize>(size));
      if (!in || in.gcount() != static_cast<std::streamsize>(size))
        return loadError(shardPath, "short read");
      out += size;
      groupBytes += size;
    }
    if (groupBytes != g.elements * 4) {
      return loadError(dir, "weight shards hold " + std::to_string(groupBytes) +
                                " bytes but the manifest needs " + std::to_string(g.elements * 4) +
                                " (truncated or missing shard)");
    }
  }
  // Corruption that keeps the size often shows as NaN/Inf; no trained weight is non-finite.
  for (const auto& [name, t] : store.tensors_) {
    if (t.dtype != "float32") continue;
    for (std::size_t i = 0; i < t.count; ++i) {
      const float v = store.data_[t.offset + i];
      if (!(v - v == 0.0f))
        return loadError(dir, "tensor " + name + " holds a non-finite value (corrupt shard)");
    }
  }
  return store;
}

Result<const WeightStore::Tensor*> WeightStore::find(
    std::string_view name, std::string_view dtype,
    std::initializer_list<std::int64_t> shape) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return loadError(dir_, "tensor " + std::string(name) + " is missing");
  const Tensor& t = it->second;
  if (t.dtype != dtype) {
    return loadError(dir_, "tensor " + std::string(name) + " is " + t.dtype + ", expected " +
                               std::string(dtype));
  }
  const std::vector<std::int64_t> want(shape);
  if (t.shape != want) {
    return loadError(dir_, "tensor " + std::string(name) + " has shape " + shapeText(t.shape) +
                               ", expected " + shapeText(want));
  }
  return &t;
}

Result<std::span<const float>> WeightStore::floats(
    std::string_view name, std::initializer_list<std::int64_t> shape) const {
  auto t = find(name, "float32", shape);
  if (!t.ok()) return t.error();
  return std::span<const float>(data_.data() + (*t)->offset, (*t)->count);
}

Result<std::vector<std::int32_t>> WeightStore::ints(
    std::string_view name, std::initializer_list<std::int64_t> shape) const {
  auto t = find(name, "int32", shape);
  if (!t.ok()) return t.error();
  std::vector<std::int32_t> v((*t)->count);
  std::memcpy(v.data(), data_.data() + (*t)->offset, v.size() * sizeof(std::int32_t));
  return v;
}

}  // namespace mcpdb::embed
