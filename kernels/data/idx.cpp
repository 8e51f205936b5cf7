// IDX reader (LeCun's MNIST format, also Fashion-MNIST): big-endian magic 0x000008DD (08 = unsigned byte,
// DD = number of dimensions) then DD big-endian uint32 sizes, then the bytes. Images are IDX3 (n, h, w),
// labels IDX1 (n). Pixels become x / 255.0f. classes = max(10, max label + 1): a *MNIST file that happens
// to lack digit 9 still has 10 classes, and a file with more labels (EMNIST letters) gets what it needs.
// Strict: a header, a size, a count or a magic number that disagrees with the file is an InputError.
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "algorithms/api/errors.hpp"
#include "kernels/data/dataset.hpp"
#include "kernels/data/file_bytes.hpp"

namespace dts::data {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;  // unsigned byte, 3 dimensions
constexpr std::uint32_t kLabelsMagic = 0x00000801;  // unsigned byte, 1 dimension
constexpr std::uint32_t kMaxSide = 1u << 16;        // h, w bound: keeps n * h * w far from overflow
constexpr int kMinClasses = 10;

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// A parsed IDX file: its sizes and a pointer to the payload inside `file.bytes`.
struct Idx {
  FileBytes file;
  std::vector<std::uint32_t> dims;
  std::size_t payload_offset = 0;
};

// Checks magic, dimension count and size; `what` ("images", "labels") only words the messages.
Idx parse_idx(const std::filesystem::path& path, std::uint32_t want_magic, const char* what) {
  const std::string where = path.string();
  Idx idx{read_file_bytes(path), {}, 0};
  const auto& b = idx.file.bytes;
  const std::string kind = idx.file.gzip ? "gzip IDX " : "IDX ";
  const unsigned want_dims = want_magic & 0xffu;
  if (b.size() < 4) {
    throw InputError(where, "truncated " + kind + std::string(what) + " file: expected a 4-byte magic number, got " +
                                std::to_string(b.size()) + " bytes");
  }
  // Magic: two zero bytes, the element type (0x08 = unsigned byte), the dimension count.
  const std::uint32_t magic = be32(b.data());
  if ((magic & 0xffffff00u) != (want_magic & 0xffffff00u)) {
    throw InputError(where, "bad magic number " + hex32(magic) + ", expected " + hex32(want_magic) + " (IDX" +
                                std::to_string(want_dims) + " unsigned-byte " + what + ")");
  }
  const unsigned ndims = magic & 0xffu;
  if (ndims != want_dims) {
    throw InputError(where, "IDX " + std::string(what) + " file has " + std::to_string(ndims) +
                                " dimensions, expected " + std::to_string(want_dims));
  }
  const std::size_t header = 4 + 4 * std::size_t{ndims};
  if (b.size() < header) {
    throw InputError(where, "truncated " + kind + "header: expected " + std::to_string(header) + " bytes, got " +
                                std::to_string(b.size()));
  }
  // Sizes: the count first (must fit Dataset::n), then the sample's sides (bounded so no product overflows).
  std::uint64_t payload = 1;
  for (unsigned d = 0; d < ndims; ++d) {
    const std::uint32_t size = be32(b.data() + 4 + 4 * d);
    if (d == 0 && size > static_cast<std::uint32_t>(INT32_MAX)) {
      throw InputError(where, "IDX count " + std::to_string(size) + " does not fit a 32-bit int");
    }
    if (d > 0 && (size == 0 || size > kMaxSide)) {
      throw InputError(where, "IDX dimension " + std::to_string(d) + " has size " + std::to_string(size) +
                                  ", expected 1.." + std::to_string(kMaxSide));
    }
    idx.dims.push_back(size);
    payload *= size;
  }
  // The payload must be exactly what the header promises: fewer bytes is a truncation, more a wrong file.
  if (idx.dims[0] == 0) throw InputError(where, "IDX " + std::string(what) + " file holds no samples");
  const std::uint64_t expected = header + payload;
  if (b.size() < expected) {
    throw InputError(where, "truncated " + kind + what + " file: header promises " + std::to_string(expected) +
                                " bytes, got " + std::to_string(b.size()));
  }
  if (b.size() > expected) {
    throw InputError(where, kind + what + " file has " + std::to_string(b.size() - expected) + " bytes after the " +
                                std::to_string(expected) + " its header promises");
  }
  idx.payload_offset = header;
  return idx;
}

// "train-images-idx3-ubyte.gz" -> "train-images-idx3-ubyte"
std::string dataset_name(const std::filesystem::path& images) {
  std::filesystem::path name = images.filename();
  if (name.extension() == ".gz") name = name.stem();
  return name.string();
}

}  // namespace

Dataset read_idx(const std::filesystem::path& images, const std::filesystem::path& labels) {
  const Idx img = parse_idx(images, kImagesMagic, "images");
  const Idx lab = parse_idx(labels, kLabelsMagic, "labels");
  if (img.dims[0] != lab.dims[0]) {
    throw InputError(labels.string(), "count mismatch: " + std::to_string(lab.dims[0]) + " labels but " +
                                          std::to_string(img.dims[0]) + " images in " + images.string());
  }

  // Both files parsed and checked; now the counts must agree before anything is converted.
  Dataset ds;
  ds.name = dataset_name(images);
  ds.n = static_cast<int>(img.dims[0]);
  ds.c = 1;
  ds.h = static_cast<int>(img.dims[1]);
  ds.w = static_cast<int>(img.dims[2]);

  // Pixels: a 256-entry table, so every value is exactly the float x / 255.0f.
  std::array<float, 256> scale{};
  for (int v = 0; v < 256; ++v) scale[static_cast<std::size_t>(v)] = static_cast<float>(v) / 255.0f;
  const std::uint8_t* px = img.file.bytes.data() + img.payload_offset;
  ds.x.resize(static_cast<std::size_t>(ds.n) * ds.sample_size());
  std::transform(px, px + ds.x.size(), ds.x.begin(), [&](std::uint8_t v) { return scale[v]; });

  const std::uint8_t* lb = lab.file.bytes.data() + lab.payload_offset;
  ds.y.assign(lb, lb + ds.n);
  const std::int32_t max_label = *std::max_element(ds.y.begin(), ds.y.end());
  ds.classes = std::max(kMinClasses, max_label + 1);
  return ds;
}

}  // namespace dts::data
