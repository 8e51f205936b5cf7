// CIFAR-10 binary reader (data_batch_1.bin .. data_batch_5.bin, test_batch.bin): each record is one label
// byte in [0, 10) and 3072 pixel bytes, the 32x32 red plane, then green, then blue (CHW, as our kernels).
// Pixels become x / 255.0f. The batches are concatenated in the order given. A file may also be gzip (the
// shared reader inflates by magic bytes). Strict: a size not a multiple of 3073 or a label >= 10 is an
// InputError naming the file.
#include <algorithm>
#include <array>
#include <string>

#include "algorithms/api/errors.hpp"
#include "kernels/data/dataset.hpp"
#include "kernels/data/file_bytes.hpp"

namespace dts::data {
namespace {

constexpr int kClasses = 10;
constexpr int kChannels = 3, kSide = 32;
constexpr std::size_t kPixels = std::size_t{kChannels} * kSide * kSide;  // 3072
constexpr std::size_t kRecord = 1 + kPixels;                             // 3073

}  // namespace

Dataset read_cifar10(const std::vector<std::filesystem::path>& batches) {
  if (batches.empty()) throw InputError("", "CIFAR-10: no batch files given");
  Dataset ds;
  ds.name = "cifar10";
  ds.c = kChannels;
  ds.h = kSide;
  ds.w = kSide;
  ds.classes = kClasses;

  std::array<float, 256> scale{};
  for (int v = 0; v < 256; ++v) scale[static_cast<std::size_t>(v)] = static_cast<float>(v) / 255.0f;

  // Batches append in order; each one is checked whole before its records are converted.
  std::size_t total = 0;
  for (const auto& path : batches) {
    const std::string where = path.string();
    const FileBytes file = read_file_bytes(path);
    const auto& b = file.bytes;
    if (b.empty() || b.size() % kRecord != 0) {
      throw InputError(where, "CIFAR-10 batch of " + std::to_string(b.size()) +
                                  " bytes is not a positive multiple of the 3073-byte record (" +
                                  std::to_string(b.size() / kRecord) + " records and " +
                                  std::to_string(b.size() % kRecord) + " bytes left over)");
    }
    const std::size_t records = b.size() / kRecord;
    if (total + records > static_cast<std::size_t>(INT32_MAX)) throw InputError(where, "too many CIFAR-10 records");
    ds.x.resize((total + records) * kPixels);
    ds.y.resize(total + records);
    for (std::size_t r = 0; r < records; ++r) {
      const std::uint8_t* rec = b.data() + r * kRecord;
      if (rec[0] >= kClasses) {
        throw InputError(where, "label " + std::to_string(rec[0]) + " out of range [0, 10) in record " +
                                    std::to_string(r) + " (byte offset " + std::to_string(r * kRecord) + ")");
      }
      ds.y[total + r] = rec[0];
      std::transform(rec + 1, rec + kRecord, ds.x.begin() + static_cast<std::ptrdiff_t>((total + r) * kPixels),
                     [&](std::uint8_t v) { return scale[v]; });
    }
    total += records;
  }
  ds.n = static_cast<int>(total);
  return ds;
}

}  // namespace dts::data
