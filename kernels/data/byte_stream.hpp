// A data file's bytes as a stream, raw or gzip (told apart by the magic bytes 1f 8b, never by the file name),
// read in chunks, so that a reader checks a header before it reads what the header promises and bounds the
// rest: nothing is read whole before it is checked. Also over a buffer in memory, for tests and fuzz targets.
// Every failure is a dts::InputError whose `where` is the stream's name (the file's path): missing file, not a
// regular file, unreadable file, corrupt or truncated gzip stream, data after the gzip stream.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace dts::data {

// Deflate's largest ratio: a 258-byte match coded in 2 bits (zlib's technical notes: "the limit is 1032:1"),
// so m bytes of gzip inflate to at most 1032 * m bytes, whatever a header inside them promises.
inline constexpr std::uint64_t kMaxDeflateRatio = 1032;

class ByteStream {
 public:
  // Opens a regular file (through a symbolic link too). A FIFO, device, socket or directory is refused from
  // its stat() without being opened: opening a FIFO for reading blocks until a writer comes, and /dev/zero
  // never ends. The file is opened non-blocking and checked again, in case the path changed in between.
  static ByteStream open_file(const std::filesystem::path& path);
  // A stream over `bytes`, which must outlive it; `name` stands for the file in messages.
  static ByteStream over_memory(std::span<const std::uint8_t> bytes, std::string name);

  ByteStream(ByteStream&&) noexcept;
  ByteStream& operator=(ByteStream&&) noexcept;
  ~ByteStream();

  // Reads up to out.size() bytes (inflated when gzip); fewer only at the end of the stream, 0 once there.
  std::size_t read(std::span<std::uint8_t> out);
  // Back to the first byte: a second pass, once a first one has checked a gzip stream whole.
  void rewind();

  const std::string& name() const;
  bool gzip() const;
  // The stream's size as stored: the file's size, or the buffer's.
  std::uint64_t stored_size() const;
  // The most bytes read() can return in all: stored_size() when raw, kMaxDeflateRatio times it when gzip.
  std::uint64_t max_size() const;

 private:
  struct Impl;
  explicit ByteStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Reads on to the end of the stream through a small buffer, keeping nothing, and stops once it has read more
// than `limit` bytes. Returns the count: limit + 1 means "more than limit".
std::uint64_t skip_to_end(ByteStream& s, std::uint64_t limit);

}  // namespace dts::data
