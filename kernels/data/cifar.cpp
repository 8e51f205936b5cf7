// CIFAR-10 binary reader (data_batch_1.bin .. data_batch_5.bin, test_batch.bin): each record is one label
// byte in [0, 10) and 3072 pixel bytes, the 32x32 red plane, then green, then blue (CHW, as our kernels).
// Pixels become x / 255.0f. The batches are concatenated in the order given. A file may also be gzip (told by
// its magic bytes). Strict: a size not a multiple of 3073, more than kMaxCifarRecords records, or a label
// >= 10 is an InputError naming the file.
// There is no header: a raw batch is sized by its file size, a gzip one by inflating it through a small
// buffer (stopping past the limit), so every batch is sized before the samples' memory is taken.
#include <algorithm>
#include <array>
#include <string>

#include "core/errors.hpp"
#include "kernels/data/byte_stream.hpp"
#include "kernels/data/dataset.hpp"

namespace dts::data {
namespace {

constexpr int kClasses = 10;
constexpr int kChannels = 3, kSide = 32;
constexpr std::size_t kPixels = std::size_t{kChannels} * kSide * kSide;  // 3072
constexpr std::size_t kRecord = 1 + kPixels;                             // 3073
constexpr std::size_t kChunkRecords = 256;                               // records read at a time

// The batch's record count, from its size (read through and rewound when gzip); at most max_records.
std::size_t count_records(ByteStream& s, std::uint64_t max_records) {
  const std::uint64_t max_bytes = max_records * kRecord;
  std::uint64_t size = s.stored_size();
  if (s.gzip()) {
    size = skip_to_end(s, max_bytes);
    s.rewind();
  }
  if (size > max_bytes) {
    throw InputError(s.name(), "CIFAR-10 batch of " + std::string(s.gzip() ? "more than " : "") +
                                   std::to_string(std::min(size, max_bytes)) + " bytes holds more than " +
                                   std::to_string(max_records) + " records (" +
                                   (max_records == kMaxCifarRecords ? "all of CIFAR-10" : "the limit") + ")");
  }
  if (size == 0 || size % kRecord != 0) {
    throw InputError(s.name(), "CIFAR-10 batch of " + std::to_string(size) +
                                   " bytes is not a positive multiple of the 3073-byte record (" +
                                   std::to_string(size / kRecord) + " records and " + std::to_string(size % kRecord) +
                                   " bytes left over)");
  }
  return static_cast<std::size_t>(size / kRecord);
}

}  // namespace

Dataset read_cifar10(std::vector<ByteStream>& batches, std::uint64_t max_values) {
  if (batches.empty()) throw InputError("", "CIFAR-10: no batch files given");
  const std::uint64_t max_records = max_values / kPixels;
  std::vector<std::size_t> records;
  std::size_t total = 0;
  for (ByteStream& s : batches) {
    s.rewind();
    records.push_back(count_records(s, std::min(kMaxCifarRecords, max_records)));
    total += records.back();
    if (total > max_records) {
      throw InputError(s.name(), "CIFAR-10 batches up to this one hold " + std::to_string(total) +
                                     " records, more than the limit of " + std::to_string(max_records) +
                                     " (kMaxSampleValues / 3072)");
    }
  }

  Dataset ds;
  ds.name = "cifar10";
  ds.n = static_cast<int>(total);
  ds.c = kChannels;
  ds.h = kSide;
  ds.w = kSide;
  ds.classes = kClasses;
  ds.x.resize(total * kPixels);
  ds.y.resize(total);

  std::array<float, 256> scale{};
  for (int v = 0; v < 256; ++v) scale[static_cast<std::size_t>(v)] = static_cast<float>(v) / 255.0f;
  std::vector<std::uint8_t> buf(kChunkRecords * kRecord);
  std::size_t at = 0;  // records converted so far, over all batches
  for (std::size_t f = 0; f < batches.size(); ++f) {
    ByteStream& s = batches[f];
    for (std::size_t r = 0; r < records[f];) {
      const std::size_t want = std::min(kChunkRecords, records[f] - r);
      if (s.read({buf.data(), want * kRecord}) != want * kRecord) {
        throw InputError(s.name(), "the file changed while it was read (shorter than when it was sized)");
      }
      for (std::size_t k = 0; k < want; ++k, ++r, ++at) {
        const std::uint8_t* rec = buf.data() + k * kRecord;
        if (rec[0] >= kClasses) {
          throw InputError(s.name(), "label " + std::to_string(rec[0]) + " out of range [0, 10) in record " +
                                         std::to_string(r) + " (byte offset " + std::to_string(r * kRecord) + ")");
        }
        ds.y[at] = rec[0];
        std::transform(rec + 1, rec + kRecord, ds.x.begin() + static_cast<std::ptrdiff_t>(at * kPixels),
                       [&](std::uint8_t v) { return scale[v]; });
      }
    }
    if (skip_to_end(s, 0) != 0) {
      throw InputError(s.name(), "the file changed while it was read (longer than when it was sized)");
    }
  }
  return ds;
}

Dataset read_cifar10(const std::vector<std::filesystem::path>& batches) {
  std::vector<ByteStream> streams;
  for (const auto& path : batches) streams.push_back(ByteStream::open_file(path));
  return read_cifar10(streams);
}

}  // namespace dts::data
