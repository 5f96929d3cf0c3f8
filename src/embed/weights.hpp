#pragma once
// Loader for a TF.js graph model's weights: model.json's weightsManifest plus its binary shards.
// Every tensor is checked on the way in (name, dtype, shape, byte count); a short, long or missing
// shard is an error that names the file, never a crash or silently wrong weights.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace mcpdb::embed {

class WeightStore {
 public:
  // Reads dir/model.json and every shard its weightsManifest lists (float32 and int32 only).
  static Result<WeightStore> load(const std::filesystem::path& dir);

  // The float32 tensor `name`, required to have exactly `shape` (FailedPrecondition otherwise).
  Result<std::span<const float>> floats(std::string_view name,
                                        std::initializer_list<std::int64_t> shape) const;
  // The int32 tensor `name` with exactly `shape`, copied out.
  Result<std::vector<std::int32_t>> ints(std::string_view name,
                                         std::initializer_list<std::int64_t> shape) const;

  std::size_t tensorCount() const { return tensors_.size(); }
  std::size_t byteCount() const { return data_.size() * sizeof(float); }

 private:
  struct Tensor {
    std::string dtype;
    std::vector<std::int64_t> shape;
    std::size_t offset = 0;  // in 4-byte elements
    std::size_t count = 0;
  };
  Result<const Tensor*> find(std::string_view name, std::string_view dtype,
                             std::initializer_list<std::int64_t> shape) const;

  std::filesystem::path dir_;
  std::map<std::string, Tensor, std::less<>> tensors_;
  std::vector<float> data_;  // all groups' shards, concatenated in manifest order
};

}  // namespace mcpdb::embed
