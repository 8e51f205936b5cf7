// Whole-file reading, raw or gzip, through zlib's gzopen/gzread (transparent for raw files).
// What to notice: a gzip stream cut short is not an error to gzread, which returns the bytes it could
// inflate; zlib records Z_BUF_ERROR ("unexpected end of file") in gzerror() and gzclose_r(), and we turn
// that into an InputError. Corrupt data (bad CRC, bad deflate codes) makes gzread return -1.
#include "kernels/data/file_bytes.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "algorithms/api/errors.hpp"

namespace dts::data {
namespace {

constexpr unsigned kZlibBufferBytes = 64u << 10;
constexpr unsigned kReadChunkBytes = 1u << 20;

// Owns a gzFile; closes it on every path (the explicit close in read_file_bytes checks the result).
struct GzCloser {
  gzFile file;
  ~GzCloser() {
    if (file != nullptr) gzclose_r(file);
  }
};

// zlib's last error on `file`, without the "path: " prefix zlib puts on it (InputError adds the path).
std::string gz_message(gzFile file, const std::string& where, int& errnum) {
  const char* msg = gzerror(file, &errnum);
  if (errnum == Z_ERRNO) return std::strerror(errno);
  std::string text = msg != nullptr ? msg : "unknown zlib error";
  if (text.rfind(where + ": ", 0) == 0) text.erase(0, where.size() + 2);
  return text;
}

}  // namespace

FileBytes read_file_bytes(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw InputError(where, "no such file");
  if (std::filesystem::is_directory(status)) throw InputError(where, "is a directory, not a data file");

  // gzopen reads the first bytes lazily; with no 1f 8b magic it copies the file through ("transparent").
  errno = 0;
  GzCloser gz{gzopen(where.c_str(), "rb")};
  if (gz.file == nullptr) {
    throw InputError(where, std::string("cannot open: ") + (errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(gz.file, kZlibBufferBytes);

  // Inflate (or copy) straight into the growing vector, a chunk at a time; gzread returns -1 on corrupt data.
  FileBytes out;
  std::size_t size = 0;
  for (;;) {
    out.bytes.resize(size + kReadChunkBytes);
    const int got = gzread(gz.file, out.bytes.data() + size, kReadChunkBytes);
    if (got < 0) {
      int errnum = 0;
      const std::string msg = gz_message(gz.file, where, errnum);
      throw InputError(where, errnum == Z_ERRNO ? "read error: " + msg : "bad gzip stream: " + msg);
    }
    size += static_cast<std::size_t>(got);
    if (got == 0) break;
  }
  out.bytes.resize(size);  // capacity may exceed size: the bytes are parsed, then dropped
  out.gzip = gzdirect(gz.file) == 0;

  // A truncated gzip stream: gzread stopped early and left Z_BUF_ERROR behind.
  int errnum = 0;
  const std::string msg = gz_message(gz.file, where, errnum);
  if (errnum == Z_BUF_ERROR) {
    throw InputError(where,
                     "truncated gzip stream (" + msg + ") after " + std::to_string(size) + " decompressed bytes");
  }
  if (errnum != Z_OK) throw InputError(where, "bad gzip stream: " + msg);
  const int closed = gzclose_r(gz.file);
  gz.file = nullptr;
  if (closed == Z_BUF_ERROR) throw InputError(where, "truncated gzip stream after " + std::to_string(size) + " bytes");
  if (closed != Z_OK) throw InputError(where, "error closing file (zlib code " + std::to_string(closed) + ")");
  return out;
}

}  // namespace dts::data
