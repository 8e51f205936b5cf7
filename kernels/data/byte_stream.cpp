// ByteStream: a file descriptor or a buffer, passed through as is or inflated with zlib's inflate() (gzip
// wrapper, windowBits 16 + 15), in whatever chunks the reader asks for.
// What to notice: a gzip file may hold several members one after another (gzip concatenates them, and gzread
// reads on); anything else after a member is an error, as is a stream that ends inside a member (inflate
// then makes no progress and returns Z_BUF_ERROR with its input used up).
#define ZLIB_CONST
#include "kernels/data/byte_stream.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "core/errors.hpp"

namespace dts::data {
namespace {

constexpr std::size_t kInputBytes = 64u << 10;  // compressed bytes read from the file at a time
constexpr std::size_t kMemoryChunk = 1u << 30;  // inflate's counters are 32-bit: feed a buffer in slices

// "a FIFO", "a character device", ... for a file that is not regular.
std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void refuse_kind(const std::string& where, mode_t mode) {
  throw InputError(where, "is " + file_kind(mode) + ", not a data file (a regular file is needed)");
}

}  // namespace

struct ByteStream::Impl {
  std::string name;
  int fd = -1;                        // a file, or -1 for a buffer
  std::span<const std::uint8_t> mem;  // the buffer when fd < 0
  std::size_t mem_pos = 0;
  std::uint64_t stored = 0;
  bool gzip = false;
  // gzip only
  z_stream zs{};
  bool zs_ready = false;
  std::vector<std::uint8_t> in;  // compressed bytes from the file
  bool source_end = false;       // the source has no more bytes
  bool finished = false;         // the last member ended where the source does
  std::uint64_t inflated = 0;    // bytes inflated since the start (messages)

  ~Impl() {
    if (zs_ready) inflateEnd(&zs);
    if (fd >= 0) close(fd);
  }

  // Up to n stored bytes into dst; 0 only at the end of the source.
  std::size_t source_read(std::uint8_t* dst, std::size_t n) {
    if (fd < 0) {
      const std::size_t got = std::min(n, mem.size() - mem_pos);
      if (got > 0) std::memcpy(dst, mem.data() + mem_pos, got);  // an empty buffer's data() may be null
      mem_pos += got;
      return got;
    }
    for (;;) {
      const ssize_t got = ::read(fd, dst, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) throw InputError(name, std::string("read error: ") + std::strerror(errno));
    }
  }

  // The next compressed bytes into zs (a slice of the buffer in place, or a read into `in`).
  void feed() {
    if (fd < 0) {
      const std::size_t n = std::min(kMemoryChunk, mem.size() - mem_pos);
      zs.next_in = mem.data() + mem_pos;
      zs.avail_in = static_cast<uInt>(n);
      mem_pos += n;
    } else {
      zs.next_in = in.data();
      zs.avail_in = static_cast<uInt>(source_read(in.data(), in.size()));
    }
    source_end = zs.avail_in == 0;
  }

  // Looks at the first two bytes, without consuming them, and sets up inflate for a gzip stream.
  void start() {
    std::uint8_t magic[2] = {0, 0};
    std::size_t got = 0;
    if (fd < 0) {
      got = std::min<std::size_t>(2, mem.size());
      if (got > 0) std::memcpy(magic, mem.data(), got);
    } else {
      while (got < 2) {
        const ssize_t n = pread(fd, magic + got, 2 - got, static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw InputError(name, std::string("read error: ") + std::strerror(errno));
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
      }
    }
    gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (!gzip || zs_ready) return;
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
    zs_ready = true;
    if (fd >= 0) in.resize(kInputBytes);
  }

  std::size_t inflate_into(std::span<std::uint8_t> out);
};

// Inflates into `out` until it is full or the stream ends; every way the stream can be wrong throws.
std::size_t ByteStream::Impl::inflate_into(std::span<std::uint8_t> out) {
  std::size_t done = 0;
  while (done < out.size() && !finished) {
    if (zs.avail_in == 0 && !source_end) feed();
    const auto room = static_cast<uInt>(std::min<std::size_t>(out.size() - done, std::numeric_limits<uInt>::max()));
    zs.next_out = out.data() + done;
    zs.avail_out = room;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    done += room - zs.avail_out;
    inflated += room - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // The member is complete (its CRC and length checked). The source may end, or hold another member.
      if (zs.avail_in == 0 && !source_end) feed();
      if (zs.avail_in == 0) {
        finished = true;
      } else if (zs.next_in[0] != 0x1f) {
        throw InputError(
            name, "data after the end of the gzip stream (after " + std::to_string(inflated) + " decompressed bytes)");
      } else {
        inflateReset(&zs);
      }
    } else if (rc == Z_BUF_ERROR && zs.avail_in == 0 && source_end) {
      throw InputError(name, "truncated gzip stream (unexpected end of file) after " + std::to_string(inflated) +
                                 " decompressed bytes");
    } else if (rc == Z_MEM_ERROR) {
      throw std::bad_alloc();
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      throw InputError(name, std::string("bad gzip stream: ") + (zs.msg != nullptr ? zs.msg : "zlib error") +
                                 " after " + std::to_string(inflated) + " decompressed bytes");
    }
  }
  return done;
}

ByteStream::ByteStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ByteStream::ByteStream(ByteStream&&) noexcept = default;
ByteStream& ByteStream::operator=(ByteStream&&) noexcept = default;
ByteStream::~ByteStream() = default;

ByteStream ByteStream::open_file(const std::filesystem::path& path) {
  auto impl = std::make_unique<Impl>();
  impl->name = path.string();
  const std::string& where = impl->name;
  struct stat st {};
  if (stat(where.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw InputError(where, "no such file");
    throw InputError(where, std::string("cannot open: ") + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) refuse_kind(where, st.st_mode);
  // O_NONBLOCK: should the path have become a FIFO since stat(), open() returns at once and fstat() refuses it.
  impl->fd = ::open(where.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (impl->fd < 0) throw InputError(where, std::string("cannot open: ") + std::strerror(errno));
  if (fstat(impl->fd, &st) != 0) throw InputError(where, std::string("cannot open: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) refuse_kind(where, st.st_mode);
  fcntl(impl->fd, F_SETFL, fcntl(impl->fd, F_GETFL) & ~O_NONBLOCK);
  impl->stored = static_cast<std::uint64_t>(st.st_size);
  impl->start();
  return ByteStream(std::move(impl));
}

ByteStream ByteStream::over_memory(std::span<const std::uint8_t> bytes, std::string name) {
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->mem = bytes;
  impl->stored = bytes.size();
  impl->start();
  return ByteStream(std::move(impl));
}

std::size_t ByteStream::read(std::span<std::uint8_t> out) {
  Impl& s = *impl_;
  if (s.gzip) return s.inflate_into(out);
  std::size_t done = 0;
  while (done < out.size()) {
    const std::size_t got = s.source_read(out.data() + done, out.size() - done);
    if (got == 0) break;
    done += got;
  }
  return done;
}

void ByteStream::rewind() {
  Impl& s = *impl_;
  if (s.fd >= 0 && lseek(s.fd, 0, SEEK_SET) != 0) {
    throw InputError(s.name, std::string("cannot seek: ") + std::strerror(errno));
  }
  s.mem_pos = 0;
  s.source_end = s.finished = false;
  s.inflated = 0;
  if (s.zs_ready) {
    inflateReset(&s.zs);
    s.zs.avail_in = 0;
  }
}

const std::string& ByteStream::name() const { return impl_->name; }
bool ByteStream::gzip() const { return impl_->gzip; }
std::uint64_t ByteStream::stored_size() const { return impl_->stored; }

std::uint64_t ByteStream::max_size() const {
  const std::uint64_t m = impl_->stored;
  if (!impl_->gzip) return m;
  return m > std::numeric_limits<std::uint64_t>::max() / kMaxDeflateRatio ? std::numeric_limits<std::uint64_t>::max()
                                                                          : m * kMaxDeflateRatio;
}

std::uint64_t skip_to_end(ByteStream& s, std::uint64_t limit) {
  std::vector<std::uint8_t> buf(std::size_t{1} << 16);
  std::uint64_t total = 0;
  while (total <= limit) {
    const std::uint64_t want = std::min<std::uint64_t>(buf.size(), limit + 1 - total);
    const std::size_t got = s.read({buf.data(), static_cast<std::size_t>(want)});
    total += got;
    if (got == 0) break;
  }
  return total;
}

}  // namespace dts::data
