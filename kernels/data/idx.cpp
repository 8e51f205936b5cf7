// IDX reader (LeCun's MNIST format, also Fashion-MNIST): big-endian magic 0x000008DD (08 = unsigned byte,
// DD = number of dimensions) then DD big-endian uint32 sizes, then the bytes. Images are IDX3 (n, h, w),
// labels IDX1 (n). Pixels become x / 255.0f. classes = max(10, max label + 1): a *MNIST file that happens
// to lack digit 9 still has 10 classes, and a file with more labels (EMNIST letters) gets what it needs.
// Strict: a header, a size, a count or a magic number that disagrees with the file is an InputError.
// Streamed, in this order: both headers (so a count mismatch costs nothing), each payload's size against
// what the file can hold (its size when raw; 1032 x its size when gzip), a gzip file inflated once to check
// its length and its end, and only then the samples' memory taken and the payloads converted.
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "core/errors.hpp"
#include "kernels/data/byte_stream.hpp"
#include "kernels/data/dataset.hpp"

namespace dts::data {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;  // unsigned byte, 3 dimensions
constexpr std::uint32_t kLabelsMagic = 0x00000801;  // unsigned byte, 1 dimension
constexpr std::uint32_t kMaxSide = 1u << 16;        // h, w bound: keeps n * h * w far from overflow
constexpr int kMinClasses = 10;
constexpr std::size_t kChunk = std::size_t{1} << 20;              // payload bytes read at a time
constexpr std::uint64_t kTrailingShown = std::uint64_t{1} << 20;  // trailing bytes counted before "more than"

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// One IDX file's header: its sizes, the header's length and the payload's (in bytes).
struct IdxHeader {
  std::vector<std::uint32_t> dims;
  std::uint64_t header = 0, payload = 0;
  std::uint64_t total() const { return header + payload; }
};

std::string kind_of(const ByteStream& s) { return s.gzip() ? "gzip IDX " : "IDX "; }

// Reads and checks the magic and the sizes; bounds the payload by max_values. `what` ("images", "labels")
// only words the messages.
IdxHeader read_header(ByteStream& s, std::uint32_t want_magic, const char* what, std::uint64_t max_values) {
  const std::string& where = s.name();
  const std::string kind = kind_of(s);
  const unsigned want_dims = want_magic & 0xffu;
  std::array<std::uint8_t, 4 + 4 * 3> b{};
  std::size_t got = s.read({b.data(), 4});
  if (got < 4) {
    throw InputError(where, "truncated " + kind + what + " file: expected a 4-byte magic number, got " +
                                std::to_string(got) + " bytes");
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
  IdxHeader h;
  h.header = 4 + 4 * std::uint64_t{ndims};
  got = 4 + s.read({b.data() + 4, 4 * std::size_t{ndims}});
  if (got < h.header) {
    throw InputError(where, "truncated " + kind + "header: expected " + std::to_string(h.header) + " bytes, got " +
                                std::to_string(got));
  }
  // Sizes: the count first (must fit Dataset::n), then the sample's sides (bounded so no product overflows).
  h.payload = 1;
  for (unsigned d = 0; d < ndims; ++d) {
    const std::uint32_t size = be32(b.data() + 4 + 4 * d);
    if (d == 0 && size > static_cast<std::uint32_t>(INT32_MAX)) {
      throw InputError(where, "IDX count " + std::to_string(size) + " does not fit a 32-bit int");
    }
    if (d > 0 && (size == 0 || size > kMaxSide)) {
      throw InputError(where, "IDX dimension " + std::to_string(d) + " has size " + std::to_string(size) +
                                  ", expected 1.." + std::to_string(kMaxSide));
    }
    h.dims.push_back(size);
    h.payload *= size;
  }
  if (h.dims[0] == 0) throw InputError(where, "IDX " + std::string(what) + " file holds no samples");
  if (h.payload > max_values) {
    throw InputError(where, "header promises " + std::to_string(h.payload) + " bytes of " + what +
                                ", more than the limit of " + std::to_string(max_values) +
                                " sample values (kMaxSampleValues)");
  }
  return h;
}

// The payload must be exactly what the header promises: fewer bytes is a truncation, more a wrong file. A raw
// file's size says so now; a gzip file's size bounds what it can inflate to (it is checked whole later).
void check_size(const ByteStream& s, const IdxHeader& h, const char* what) {
  const std::string& where = s.name();
  if (!s.gzip() && s.stored_size() < h.total()) {
    throw InputError(where, "truncated IDX " + std::string(what) + " file: header promises " +
                                std::to_string(h.total()) + " bytes, got " + std::to_string(s.stored_size()));
  }
  if (!s.gzip() && s.stored_size() > h.total()) {
    throw InputError(where, "IDX " + std::string(what) + " file has " + std::to_string(s.stored_size() - h.total()) +
                                " bytes after the " + std::to_string(h.total()) + " its header promises");
  }
  if (s.gzip() && h.total() > s.max_size()) {
    throw InputError(where, "header promises " + std::to_string(h.total()) + " bytes, more than a gzip file of " +
                                std::to_string(s.stored_size()) + " bytes can hold (at most " +
                                std::to_string(kMaxDeflateRatio) + " times its size)");
  }
}

// Reads the payload in chunks, passing each to consume(bytes, offset), then requires the end of the stream.
template <typename Consume>
void read_payload(ByteStream& s, const IdxHeader& h, const char* what, Consume&& consume) {
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, h.payload)));
  for (std::uint64_t done = 0; done < h.payload;) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), h.payload - done));
    const std::size_t got = s.read({buf.data(), want});
    if (got < want) {
      throw InputError(s.name(), "truncated " + kind_of(s) + what + " file: header promises " +
                                     std::to_string(h.total()) + " bytes, got " +
                                     std::to_string(h.header + done + got));
    }
    consume(std::span<const std::uint8_t>(buf.data(), got), done);
    done += got;
  }
  if (const std::uint64_t extra = skip_to_end(s, kTrailingShown); extra > 0) {
    throw InputError(s.name(), kind_of(s) + what + " file has " + (extra > kTrailingShown ? "more than " : "") +
                                   std::to_string(std::min(extra, kTrailingShown)) + " bytes after the " +
                                   std::to_string(h.total()) + " its header promises");
  }
}

// A gzip file is inflated once, keeping nothing, to check its length and its end; then rewound to its payload.
void check_gzip_payload(ByteStream& s, const IdxHeader& h, std::uint32_t magic, const char* what) {
  if (!s.gzip()) return;
  read_payload(s, h, what, [](std::span<const std::uint8_t>, std::uint64_t) {});
  s.rewind();
  if (read_header(s, magic, what, h.payload).dims != h.dims) {
    throw InputError(s.name(), "the file changed while it was read");
  }
}

// "train-images-idx3-ubyte.gz" -> "train-images-idx3-ubyte"
std::string dataset_name(const std::filesystem::path& images) {
  std::filesystem::path name = images.filename();
  if (name.extension() == ".gz") name = name.stem();
  return name.string();
}

}  // namespace

Dataset read_idx(ByteStream& images, ByteStream& labels, std::uint64_t max_values) {
  images.rewind();
  labels.rewind();
  const IdxHeader img = read_header(images, kImagesMagic, "images", max_values);
  const IdxHeader lab = read_header(labels, kLabelsMagic, "labels", max_values);
  if (img.dims[0] != lab.dims[0]) {
    throw InputError(labels.name(), "count mismatch: " + std::to_string(lab.dims[0]) + " labels but " +
                                        std::to_string(img.dims[0]) + " images in " + images.name());
  }
  check_size(images, img, "images");
  check_size(labels, lab, "labels");
  check_gzip_payload(images, img, kImagesMagic, "images");
  check_gzip_payload(labels, lab, kLabelsMagic, "labels");

  // Both files checked; now the memory for the samples, and the conversion.
  Dataset ds;
  ds.name = dataset_name(images.name());
  ds.n = static_cast<int>(img.dims[0]);
  ds.c = 1;
  ds.h = static_cast<int>(img.dims[1]);
  ds.w = static_cast<int>(img.dims[2]);

  // Pixels: a 256-entry table, so every value is exactly the float x / 255.0f.
  std::array<float, 256> scale{};
  for (int v = 0; v < 256; ++v) scale[static_cast<std::size_t>(v)] = static_cast<float>(v) / 255.0f;
  ds.x.resize(static_cast<std::size_t>(img.payload));
  read_payload(images, img, "images", [&](std::span<const std::uint8_t> px, std::uint64_t at) {
    std::transform(px.begin(), px.end(), ds.x.begin() + static_cast<std::ptrdiff_t>(at),
                   [&](std::uint8_t v) { return scale[v]; });
  });
  ds.y.resize(static_cast<std::size_t>(ds.n));
  read_payload(labels, lab, "labels", [&](std::span<const std::uint8_t> lb, std::uint64_t at) {
    std::copy(lb.begin(), lb.end(), ds.y.begin() + static_cast<std::ptrdiff_t>(at));
  });
  const std::int32_t max_label = *std::max_element(ds.y.begin(), ds.y.end());
  ds.classes = std::max(kMinClasses, max_label + 1);
  return ds;
}

Dataset read_idx(const std::filesystem::path& images, const std::filesystem::path& labels) {
  ByteStream img = ByteStream::open_file(images);
  ByteStream lab = ByteStream::open_file(labels);
  return read_idx(img, lab);
}

}  // namespace dts::data
